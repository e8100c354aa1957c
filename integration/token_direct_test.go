package integration

import (
	"net/url"
	"reflect"
	"slices"
	"testing"

	"golang.org/x/oauth2"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/vocab"
)

// The token endpoint answers the common requests without op's router and
// form decoder (authserver.directToken). Every request here is sent twice,
// once through each path, and the answers must match: status, the error
// and its description, the JSON members of a success, and the caching and
// content-type headers.
func TestDirectTokenMatchesOp(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		token := ts.academy() + vocab.TokenPath
		member := func() *flow { return newFlow(t, ts, ts.academy(), demo.MemberClientID, "openid", "account:read") }

		type answer struct {
			Status               int
			Error, Description   any
			Members              []string
			ContentType, NoStore string
		}
		send := func(direct bool, v url.Values) answer {
			ts.srv.Auth().SetDirectToken(direct)
			defer ts.srv.Auth().SetDirectToken(true)
			status, h, body := ts.postForm(t, token, v)
			a := answer{Status: status, Error: body["error"], Description: body["error_description"], ContentType: h.Get("Content-Type"), NoStore: h.Get("Cache-Control")}
			if status == 200 {
				for k := range body {
					a.Members = append(a.Members, k)
				}
				slices.Sort(a.Members)
			}
			return a
		}
		same := func(t *testing.T, name string, mk func() url.Values) {
			t.Run(name, func(t *testing.T) {
				viaOp, direct := send(false, mk()), send(true, mk())
				if !reflect.DeepEqual(viaOp, direct) {
					t.Fatalf("op: %+v\ndirect: %+v", viaOp, direct)
				}
				t.Logf("%+v", direct)
			})
		}
		// Fresh tokens and codes per request: each path consumes its own.
		refresh := func() string {
			f := member()
			tok, err := f.exchange(f.authorize(demo.StudentEmail, demo.StudentPassword))
			if err != nil {
				t.Fatal(err)
			}
			return tok.RefreshToken
		}
		code := func() (string, *flow) {
			f := member()
			return f.authorize(demo.StudentEmail, demo.StudentPassword), f
		}

		same(t, "refresh", func() url.Values {
			return url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh()}, "client_id": {demo.MemberClientID}}
		})
		same(t, "code exchange", func() url.Values {
			c, f := code()
			return url.Values{"grant_type": {"authorization_code"}, "code": {c}, "redirect_uri": {callback}, "client_id": {demo.MemberClientID},
				"code_verifier": {f.verifier}, "resource": {f.origin}}
		})
		same(t, "refresh token reused", func() url.Values {
			rt := refresh()
			f := member()
			if _, err := f.conf.TokenSource(f.ctx, &oauth2.Token{RefreshToken: rt}).Token(); err != nil {
				t.Fatal(err)
			}
			return url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {demo.MemberClientID}}
		})
		same(t, "unknown refresh token", func() url.Values {
			return url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"nope"}, "client_id": {demo.MemberClientID}}
		})
		same(t, "refresh_token missing", func() url.Values {
			return url.Values{"grant_type": {"refresh_token"}, "client_id": {demo.MemberClientID}}
		})
		same(t, "code missing", func() url.Values {
			return url.Values{"grant_type": {"authorization_code"}, "redirect_uri": {callback}, "client_id": {demo.MemberClientID}}
		})
		same(t, "redirect_uri missing", func() url.Values {
			return url.Values{"grant_type": {"authorization_code"}, "code": {"x"}, "client_id": {demo.MemberClientID}}
		})
		same(t, "unknown code", func() url.Values {
			return url.Values{"grant_type": {"authorization_code"}, "code": {"0123456789012345678901234567890123456789012"}, "redirect_uri": {callback},
				"client_id": {demo.MemberClientID}, "code_verifier": {oauth2.GenerateVerifier()}, "resource": {ts.academy()}}
		})
		same(t, "unknown client", func() url.Values {
			return url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}, "client_id": {"no-such-client"}}
		})
		same(t, "public client with a secret", func() url.Values {
			return url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}, "client_id": {demo.MemberClientID}, "client_secret": {"s"}}
		})
		same(t, "wrong PKCE verifier", func() url.Values {
			c, f := code()
			return url.Values{"grant_type": {"authorization_code"}, "code": {c}, "redirect_uri": {callback}, "client_id": {demo.MemberClientID},
				"code_verifier": {oauth2.GenerateVerifier()}, "resource": {f.origin}}
		})
	})
}
