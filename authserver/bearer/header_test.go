package bearer

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/lectern/lectern/tenant"
)

func TestTokenFromHeader(t *testing.T) {
	const tok = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln-_~+/=="
	for _, tc := range []struct {
		name    string
		values  []string // Authorization header lines; nil: none
		want    string
		noToken bool // the error wraps ErrNoToken
		bad     bool // any other 401
	}{
		{name: "missing", noToken: true},
		{name: "Basic credentials", values: []string{"Basic dXNlcjpwYXNz"}, noToken: true},
		{name: "Basic x", values: []string{"Basic x"}, noToken: true},
		{name: "empty value", values: []string{""}, noToken: true},
		{name: "scheme glued to token", values: []string{"Bearer" + tok}, noToken: true},
		{name: "valid", values: []string{"Bearer " + tok}, want: tok},
		{name: "lower-case scheme", values: []string{"bearer " + tok}, want: tok},
		{name: "upper-case scheme", values: []string{"BEARER " + tok}, want: tok},
		{name: "several spaces", values: []string{"Bearer   " + tok}, want: tok},
		{name: "Bearer alone", values: []string{"Bearer"}, bad: true},
		{name: "Bearer and a space", values: []string{"Bearer "}, bad: true},
		{name: "two tokens", values: []string{"Bearer a b"}, bad: true},
		{name: "two credentials in one header", values: []string{"Bearer a, Bearer b"}, bad: true},
		{name: "two Authorization headers", values: []string{"Bearer " + tok, "Bearer " + tok}, bad: true},
		{name: "Bearer and Basic headers", values: []string{"Basic x", "Bearer " + tok}, bad: true},
		{name: "tab separator", values: []string{"Bearer\t" + tok}, noToken: true},
		{name: "tab inside", values: []string{"Bearer a\tb"}, bad: true},
		{name: "quote", values: []string{`Bearer "abc"`}, bad: true},
		{name: "comma", values: []string{"Bearer abc,def"}, bad: true},
		{name: "padding in the middle", values: []string{"Bearer ab=c"}, bad: true},
		{name: "only padding", values: []string{"Bearer ==="}, bad: true},
		{name: "non-ASCII", values: []string{"Bearer abc\u00e9"}, bad: true},
		{name: "auth-param form", values: []string{"Bearer token=abc"}, bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tc.values {
				h.Add("Authorization", v)
			}
			got, err := TokenFromHeader(h)
			switch {
			case tc.want != "":
				if err != nil || got != tc.want {
					t.Fatalf("TokenFromHeader = %q, %v; want %q", got, err, tc.want)
				}
				return
			case got != "":
				t.Fatalf("TokenFromHeader = %q, want no token", got)
			}
			e := wantStatus(t, err, 401, tc.name)
			if e.Code != CodeInvalidToken {
				t.Errorf("code %q", e.Code)
			}
			if errors.Is(err, ErrNoToken) != tc.noToken {
				t.Errorf("errors.Is(err, ErrNoToken) = %v, want %v (err %v)", !tc.noToken, tc.noToken, err)
			}
			if tc.noToken && e.Description != "no bearer token" {
				t.Errorf("description %q, want %q", e.Description, "no bearer token")
			}
		})
	}
}

func FuzzTokenFromHeader(f *testing.F) {
	for _, s := range []string{"Bearer abc", "bearer a.b.c", "Bearer", "Basic x", "Bearer a b", "Bearer ==", "Bearer a=", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		h := http.Header{"Authorization": {v}}
		tok, err := TokenFromHeader(h)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Status != 401 || tok != "" {
				t.Fatalf("TokenFromHeader(%q) = %q, %v", v, tok, err)
			}
			return
		}
		if !isB64Token(tok) {
			t.Fatalf("TokenFromHeader(%q) accepted %q, not a b64token", v, tok)
		}
		scheme, rest, _ := strings.Cut(v, " ")
		if !strings.EqualFold(scheme, "Bearer") || strings.TrimLeft(rest, " ") != tok {
			t.Fatalf("TokenFromHeader(%q) = %q: not the credential of the header", v, tok)
		}
	})
}

func TestAuthenticate(t *testing.T) {
	e := quickEnv(t, nil)
	raw, c := e.token(t, e.a)
	req := func(site *tenant.Site, mutate func(r *http.Request)) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "https://example.test/member/graphql", strings.NewReader(`{"query":"{viewer{id}}"}`))
		if site != nil {
			r = r.WithContext(tenant.WithSite(r.Context(), site))
		}
		if mutate != nil {
			mutate(r)
		}
		return r
	}

	tok, err := e.v.Authenticate(req(e.a, func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+raw) }))
	if err != nil || tok.JTI != c.JTI {
		t.Fatalf("Authenticate = %+v, %v", tok, err)
	}

	_, err = e.v.Authenticate(req(e.a, nil))
	if wantStatus(t, err, 401, "no token"); !errors.Is(err, ErrNoToken) {
		t.Errorf("no token: %v does not wrap ErrNoToken", err)
	}

	_, err = e.v.Authenticate(req(e.a, func(r *http.Request) {
		r.URL.RawQuery = url.Values{"access_token": {raw}}.Encode()
	}))
	if wantStatus(t, err, 401, "token in the query string"); !errors.Is(err, ErrNoToken) {
		t.Errorf("a token in the query was looked at: %v", err)
	}

	_, err = e.v.Authenticate(req(e.a, func(r *http.Request) {
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Body = io.NopCloser(strings.NewReader("access_token=" + raw))
	}))
	if wantStatus(t, err, 401, "token in the body"); !errors.Is(err, ErrNoToken) {
		t.Errorf("a token in the body was looked at: %v", err)
	}

	_, err = e.v.Authenticate(req(e.b, func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+raw) }))
	wantStatus(t, err, 401, "site A's token at site B")

	_, err = e.v.Authenticate(req(nil, func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+raw) }))
	wantStatus(t, err, 404, "no site in the context")
}
