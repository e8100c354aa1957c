package bearer

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lectern/lectern/authserver/keys"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

func TestVerifyValidToken(t *testing.T) {
	eachBackend(t, nil, func(t *testing.T, e *env) {
		raw, c := e.token(t, e.a)
		tok, err := e.v.Verify(t.Context(), e.a, raw)
		if err != nil {
			t.Fatalf("Verify: %v", err)
		}
		want := &Token{
			Site:     e.a.ID,
			Subject:  e.userID,
			ClientID: "demo-member-app",
			GrantID:  c.GrantID,
			JTI:      c.JTI,
			Audience: e.a.Resource(),
			Scopes:   []string{"openid", "account:read"},
			IssuedAt: time.Unix(c.IssuedAt, 0).UTC(),
			Expiry:   time.Unix(c.Expiry, 0).UTC(),
			AuthTime: time.Unix(c.AuthTime, 0).UTC(),
		}
		if d := cmp.Diff(want, tok); d != "" {
			t.Errorf("Token (-want +got):\n%s", d)
		}
		// Site B's own token verifies at B, with B's key.
		rawB, _ := e.token(t, e.b)
		if _, err := e.v.Verify(t.Context(), e.b, rawB); err != nil {
			t.Errorf("site B's token at site B: %v", err)
		}
	})
}

// TestVerifyRefuses runs every way a token can be wrong; each case must be
// refused with 401, and the positive cases beside them accepted.
func TestVerifyRefuses(t *testing.T) {
	eachBackend(t, nil, func(t *testing.T, e *env) {
		ga := e.grant(t, e.a)
		skA, skB := e.signingKey(t, e.a), e.signingKey(t, e.b)
		valid := func() Claims { return e.claims(e.a, ga) }
		with := func(f func(*Claims)) Claims { c := valid(); f(&c); return c }
		// asMap lets a case drop a claim or give it a type Claims cannot.
		asMap := func(f func(m map[string]any)) map[string]any {
			c := valid()
			m := map[string]any{
				"iss": c.Issuer, "sub": c.Subject, "aud": c.Audience, "client_id": c.ClientID,
				"scope": c.Scope, "jti": c.JTI, "iat": c.IssuedAt, "exp": c.Expiry, "grant_id": c.GrantID,
			}
			f(m)
			return m
		}
		hdrA := func(f func(h map[string]any)) map[string]any {
			h := map[string]any{"alg": "ES256", "typ": TokenType, "kid": skA.KID}
			if f != nil {
				f(h)
			}
			return h
		}
		now := time.Now()
		rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		otherKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		pubA, _ := skA.Public.Bytes()

		good := e.mint(t, e.a, valid())
		segs := strings.Split(good, ".")

		for _, tc := range []struct {
			name string
			raw  string
			want int // 0: accepted
			desc string
		}{
			{"valid", good, 0, ""},
			{"typ application/at+jwt (RFC 9068 §4)", compact(t, hdrA(func(h map[string]any) { h["typ"] = "application/AT+JWT" }), valid(), es256(t, skA.Private)), 0, ""},
			{"aud array containing the resource", e.mint(t, e.a, asMap(func(m map[string]any) { m["aud"] = []string{"https://other.example", e.a.Resource()} })), 0, ""},
			{"expired within skew", e.mint(t, e.a, with(func(c *Claims) { c.Expiry = now.Add(-DefaultSkew + time.Second).Unix() })), 0, ""},
			{"iat in the future within skew", e.mint(t, e.a, with(func(c *Claims) { c.IssuedAt = now.Add(DefaultSkew).Unix() })), 0, ""},

			{"signed by site B's key under site A's kid", compact(t, hdrA(nil), valid(), es256(t, skB.Private)), 401, descSignature},
			{"signed by a stranger's key under site A's kid", compact(t, hdrA(nil), valid(), es256(t, otherKey)), 401, descSignature},
			{"tampered payload", segs[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"`+e.a.Issuer()+`","sub":"usr_admin"}`)) + "." + segs[2], 401, descSignature},
			{"tampered signature", segs[0] + "." + segs[1] + "." + flipMiddleChar(segs[2]), 401, descSignature},
			{"signature truncated", segs[0] + "." + segs[1] + "." + segs[2][:40], 401, descSignature},
			{"signature empty", segs[0] + "." + segs[1] + ".", 401, descMalformed},
			{"unknown kid", compact(t, hdrA(func(h map[string]any) { h["kid"] = "no-such-key" }), valid(), es256(t, skA.Private)), 401, "does not publish"},
			{"site B's kid at site A", compact(t, hdrA(func(h map[string]any) { h["kid"] = skB.KID }), valid(), es256(t, skB.Private)), 401, "does not publish"},
			{"no kid", compact(t, hdrA(func(h map[string]any) { delete(h, "kid") }), valid(), es256(t, skA.Private)), 401, descMalformed},
			{"typ JWT (an id_token)", compact(t, hdrA(func(h map[string]any) { h["typ"] = "JWT" }), valid(), es256(t, skA.Private)), 401, descType},
			{"id_token minted by the key ring", mintTyp(t, skA, valid(), "JWT"), 401, descType},
			{"no typ", compact(t, hdrA(func(h map[string]any) { delete(h, "typ") }), valid(), es256(t, skA.Private)), 401, descType},
			{"crit header", compact(t, hdrA(func(h map[string]any) { h["crit"] = []string{"exp"}; h["exp"] = 1 }), valid(), es256(t, skA.Private)), 401, descMalformed},
			{"alg none", compact(t, hdrA(func(h map[string]any) { h["alg"] = "none" }), valid(), nil), 401, descMalformed}, // empty signature segment
			{"alg none with a signature", compact(t, hdrA(func(h map[string]any) { h["alg"] = "none" }), valid(), es256(t, skA.Private)), 401, descAlg},
			{"alg HS256 keyed with the public key", compact(t, hdrA(func(h map[string]any) { h["alg"] = "HS256" }), valid(), hs256(pubA)), 401, descAlg},
			{"alg HS256 keyed with the kid", compact(t, hdrA(func(h map[string]any) { h["alg"] = "HS256" }), valid(), hs256([]byte(skA.KID))), 401, descAlg},
			{"alg RS256", compact(t, hdrA(func(h map[string]any) { h["alg"] = "RS256" }), valid(), rs256(t, rsaKey)), 401, descAlg},
			{"alg es256 lower case", compact(t, hdrA(func(h map[string]any) { h["alg"] = "es256" }), valid(), es256(t, skA.Private)), 401, descAlg},
			{"alg ES384", compact(t, hdrA(func(h map[string]any) { h["alg"] = "ES384" }), valid(), es256(t, skA.Private)), 401, descAlg},
			{"JWE (five segments)", "eyJhbGciOiJSU0EtT0FFUCIsImVuYyI6IkEyNTZHQ00iLCJ0eXAiOiJhdCtqd3QifQ.a2V5.aXY.Y2lwaGVy.dGFn", 401, descMalformed},
			{"JSON serialization", `{"payload":"` + segs[1] + `","protected":"` + segs[0] + `","signature":"` + segs[2] + `"}`, 401, descMalformed},
			{"padded segments", segs[0] + "=." + segs[1] + "." + segs[2], 401, descMalformed},
			{"standard base64 alphabet", segs[0] + "." + segs[1] + ".+" + segs[2][1:], 401, descMalformed},
			{"two segments", segs[0] + "." + segs[1], 401, descMalformed},
			{"empty", "", 401, descMalformed},
			{"garbage", "not a token", 401, descMalformed},
			{"oversized", good + strings.Repeat("A", maxTokenBytes), 401, descMalformed},
			{"payload not JSON", compact(t, hdrA(nil), "not json", es256(t, skA.Private)), 401, descMalformed},
			{"two JSON values in the payload", compact(t, hdrA(nil), `{"iss":"x"} {"iss":"y"}`, es256(t, skA.Private)), 401, descMalformed},

			{"wrong iss", e.mint(t, e.a, with(func(c *Claims) { c.Issuer = "https://evil.example" })), 401, descIssuer},
			{"site B's iss", e.mint(t, e.a, with(func(c *Claims) { c.Issuer = e.b.Issuer() })), 401, descIssuer},
			{"site B's aud", e.mint(t, e.a, with(func(c *Claims) { c.Audience = e.b.Resource() })), 401, descAudience},
			{"aud with a trailing slash", e.mint(t, e.a, with(func(c *Claims) { c.Audience = e.a.Resource() + "/" })), 401, descAudience},
			{"aud in upper case", e.mint(t, e.a, with(func(c *Claims) { c.Audience = strings.ToUpper(e.a.Resource()) })), 401, descAudience},
			{"aud array without the resource", e.mint(t, e.a, asMap(func(m map[string]any) { m["aud"] = []string{e.b.Resource(), "https://other.example"} })), 401, descAudience},
			{"aud empty array", e.mint(t, e.a, asMap(func(m map[string]any) { m["aud"] = []string{} })), 401, descAudience},
			{"aud missing", e.mint(t, e.a, asMap(func(m map[string]any) { delete(m, "aud") })), 401, descAudience},
			{"aud a number", e.mint(t, e.a, asMap(func(m map[string]any) { m["aud"] = 7 })), 401, descMalformed},
			{"expired beyond skew", e.mint(t, e.a, with(func(c *Claims) { c.Expiry = now.Add(-DefaultSkew).Unix() })), 401, descExpired},
			{"expired long ago", e.mint(t, e.a, with(func(c *Claims) { c.IssuedAt, c.Expiry = now.Add(-3*time.Hour).Unix(), now.Add(-2*time.Hour).Unix() })), 401, descExpired},
			{"iat beyond skew in the future", e.mint(t, e.a, with(func(c *Claims) { c.IssuedAt = now.Add(DefaultSkew + time.Second).Unix() })), 401, descFuture},
			{"exp a string", e.mint(t, e.a, asMap(func(m map[string]any) { m["exp"] = fmt.Sprint(now.Add(time.Hour).Unix()) })), 401, descMalformed},
			{"no exp", e.mint(t, e.a, asMap(func(m map[string]any) { delete(m, "exp") })), 401, "no exp"},
			{"no iat", e.mint(t, e.a, asMap(func(m map[string]any) { delete(m, "iat") })), 401, "no iat"},
			{"no sub", e.mint(t, e.a, with(func(c *Claims) { c.Subject = "" })), 401, "no sub"},
			{"no client_id", e.mint(t, e.a, with(func(c *Claims) { c.ClientID = "" })), 401, "no client_id"},
			{"no jti", e.mint(t, e.a, with(func(c *Claims) { c.JTI = "" })), 401, "no jti"},
			{"no grant_id", e.mint(t, e.a, with(func(c *Claims) { c.GrantID = "" })), 401, "no grant_id"},
		} {
			// A synctest bubble holds no subtests: each case names itself.
			tok, err := e.v.Verify(t.Context(), e.a, tc.raw)
			var got *Error
			errors.As(err, &got)
			switch {
			case tc.want == 0:
				if err != nil || tok == nil || tok.Site != e.a.ID {
					t.Errorf("%s: token %+v, err %v; want it accepted", tc.name, tok, err)
				}
			case tok != nil:
				t.Errorf("%s: refused token returned %+v", tc.name, tok)
			case got == nil || got.Status != tc.want:
				t.Errorf("%s: err = %v (%T), want a *bearer.Error with status %d", tc.name, err, err, tc.want)
			default:
				if got.Code != CodeInvalidToken {
					t.Errorf("%s: code %q, want invalid_token", tc.name, got.Code)
				}
				if !strings.Contains(got.Description, tc.desc) {
					t.Errorf("%s: description %q, want it to mention %q", tc.name, got.Description, tc.desc)
				}
			}
		}

		// A valid token of site B is refused at site A whether its kid is
		// looked up at A (unknown there) or it is re-signed with A's key
		// (aud/iss are B's): one site's tokens never open another's API.
		rawB, cB := e.token(t, e.b)
		wantStatus(t, func() error { _, err := e.v.Verify(t.Context(), e.a, rawB); return err }(), 401, "site B's token at site A")
		wantStatus(t, func() error { _, err := e.v.Verify(t.Context(), e.a, e.mint(t, e.a, cB)); return err }(), 401, "site B's claims signed by site A")
	})
}

func flipMiddleChar(s string) string {
	// Not the last character: that one carries padding bits, and Strict
	// decoding would reject it before any signature check.
	b := []byte(s)
	i := len(b) / 2
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

func mintTyp(t *testing.T, sk *keys.SigningKey, c Claims, typ string) string {
	t.Helper()
	raw, err := sk.Sign(mustJSON(t, c), typ)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func hs256(key []byte) func([]byte) []byte {
	return func(input []byte) []byte {
		m := hmac.New(sha256.New, key)
		m.Write(input)
		return m.Sum(nil)
	}
}

func rs256(t *testing.T, k *rsa.PrivateKey) func([]byte) []byte {
	return func(input []byte) []byte {
		d := sha256.Sum256(input)
		sig, err := rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, d[:])
		if err != nil {
			t.Fatal(err)
		}
		return sig
	}
}

// TestVerifyKeySourceErrors: only "unknown key" refuses a token; any other
// failure to get the key is an outage (503), never a 401 for a token that
// may be valid.
func TestVerifyKeySourceErrors(t *testing.T) {
	e := quickEnv(t, nil)
	raw, _ := e.token(t, e.a)
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"unknown key", fmt.Errorf("lookup: %w", keys.ErrUnknownKey), 401},
		{"corrupt key", &keys.CorruptKeyError{Site: e.a.ID, KID: "k", Err: keys.ErrSealedKey}, 503},
		{"store unavailable", fmt.Errorf("keys: %w", storage.ErrUnavailable), 503},
		{"anything else", fmt.Errorf("boom"), 503},
		{"no key and no error", nil, 503},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := e.options
			opts.Keys = keySourceFunc(func(context.Context, tenant.ID, string) (*ecdsa.PublicKey, error) { return nil, tc.err })
			v := New(opts)
			_, err := v.Verify(t.Context(), e.a, raw)
			got := wantStatus(t, err, tc.want, tc.name)
			if tc.want == 503 && got.Code != CodeTemporarilyUnavailable {
				t.Errorf("code %q, want temporarily_unavailable", got.Code)
			}
		})
	}

	// A key that is not P-256 is our misconfiguration, not the token's.
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	opts := e.options
	opts.Keys = keySourceFunc(func(context.Context, tenant.ID, string) (*ecdsa.PublicKey, error) { return &p384.PublicKey, nil })
	_, err = New(opts).Verify(t.Context(), e.a, raw)
	wantStatus(t, err, 503, "P-384 key for an ES256 token")
}

// TestVerifiedTokenCache: a repeated token skips parsing and signature
// checks, but the cached answer is dropped when it stops being true.
func TestVerifiedTokenCache(t *testing.T) {
	t.Run("hit", func(t *testing.T) {
		e := quickEnv(t, nil)
		raw, _ := e.token(t, e.a)
		first, err := e.v.Verify(t.Context(), e.a, raw)
		if err != nil {
			t.Fatal(err)
		}
		key := sha256.Sum256([]byte(raw))
		if e.v.tokens.get(&key, time.Now()) == nil {
			t.Fatal("a verified token is not in the cache")
		}
		second, err := e.v.Verify(t.Context(), e.a, raw)
		if err != nil {
			t.Fatal(err)
		}
		if first != second {
			t.Error("the second Verify did not answer from the cache")
		}
	})

	t.Run("refused tokens are not cached", func(t *testing.T) {
		e := quickEnv(t, nil)
		c := e.claims(e.a, e.grant(t, e.a))
		c.Issuer = "https://evil.example"
		_, _ = e.v.Verify(t.Context(), e.a, e.mint(t, e.a, c))
		if n := e.v.tokens.len(); n != 0 {
			t.Errorf("%d cache entries after a refused token", n)
		}
	})

	t.Run("expiry", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			e := quickEnv(t, nil)
			raw, c := e.token(t, e.a)
			if _, err := e.v.Verify(t.Context(), e.a, raw); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Until(time.Unix(c.Expiry, 0)) + DefaultSkew)
			_, err := e.v.Verify(t.Context(), e.a, raw)
			if got := wantStatus(t, err, 401, "cached token after exp+skew"); got.Description != descExpired {
				t.Errorf("description %q, want %q", got.Description, descExpired)
			}
			if n := e.v.tokens.len(); n != 0 {
				t.Errorf("the expired entry stayed: %d entries", n)
			}
		})
	})

	t.Run("other site", func(t *testing.T) {
		e := quickEnv(t, nil)
		raw, _ := e.token(t, e.a)
		if _, err := e.v.Verify(t.Context(), e.a, raw); err != nil {
			t.Fatal(err)
		}
		_, err := e.v.Verify(t.Context(), e.b, raw)
		wantStatus(t, err, 401, "site A's cached token at site B")
	})

	t.Run("site origin changed", func(t *testing.T) {
		e := quickEnv(t, nil)
		raw, _ := e.token(t, e.a)
		if _, err := e.v.Verify(t.Context(), e.a, raw); err != nil {
			t.Fatal(err)
		}
		moved := *e.a
		moved.Origin = "https://moved.example.test"
		_, err := e.v.Verify(t.Context(), &moved, raw)
		wantStatus(t, err, 401, "cached token after the site's origin changed")
	})

	t.Run("key no longer published", func(t *testing.T) {
		e := quickEnv(t, nil)
		var unpublished bool
		e.v.keys = keySourceFunc(func(ctx context.Context, site tenant.ID, kid string) (*ecdsa.PublicKey, error) {
			if unpublished {
				return nil, keys.ErrUnknownKey
			}
			return e.keys.PublicKey(ctx, site, kid)
		})
		raw, _ := e.token(t, e.a)
		if _, err := e.v.Verify(t.Context(), e.a, raw); err != nil {
			t.Fatal(err)
		}
		unpublished = true
		_, err := e.v.Verify(t.Context(), e.a, raw)
		wantStatus(t, err, 401, "cached token whose key was withdrawn")
	})

	t.Run("key replaced under the same kid", func(t *testing.T) {
		e := quickEnv(t, nil)
		other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		var replaced bool
		e.v.keys = keySourceFunc(func(ctx context.Context, site tenant.ID, kid string) (*ecdsa.PublicKey, error) {
			if replaced {
				return &other.PublicKey, nil
			}
			return e.keys.PublicKey(ctx, site, kid)
		})
		raw, _ := e.token(t, e.a)
		if _, err := e.v.Verify(t.Context(), e.a, raw); err != nil {
			t.Fatal(err)
		}
		replaced = true
		_, err = e.v.Verify(t.Context(), e.a, raw)
		wantStatus(t, err, 401, "cached token whose kid now names another key")
	})

	t.Run("bounded", func(t *testing.T) {
		e := quickEnv(t, func(o *Options) { o.CacheEntries = 8 })
		g := e.grant(t, e.a)
		for i := range 50 {
			raw := e.mint(t, e.a, e.claims(e.a, g))
			if _, err := e.v.Verify(t.Context(), e.a, raw); err != nil {
				t.Fatalf("token %d: %v", i, err)
			}
			if n := e.v.tokens.len(); n > 8 {
				t.Fatalf("after %d tokens the cache holds %d entries, bound 8", i+1, n)
			}
		}
	})

	t.Run("disabled", func(t *testing.T) {
		e := quickEnv(t, func(o *Options) { o.CacheEntries = -1 })
		raw, _ := e.token(t, e.a)
		for range 2 {
			if _, err := e.v.Verify(t.Context(), e.a, raw); err != nil {
				t.Fatal(err)
			}
		}
		if e.v.tokens != nil || e.v.tokens.len() != 0 {
			t.Error("CacheEntries < 0 still caches")
		}
	})
}

func TestTokenCacheEvictsExpiredFirst(t *testing.T) {
	c := newTokenCache(1) // one shard of one entry
	now := time.Now()
	k1, k2 := [32]byte{1}, [32]byte{2}
	c.put(&k1, &verified{until: now.Add(time.Minute)}, now)
	c.put(&k2, &verified{until: now.Add(time.Minute)}, now)
	if c.len() != 1 || c.get(&k2, now) == nil {
		t.Fatalf("a full shard did not make room for the new entry (len %d)", c.len())
	}
	if c.get(&k2, now.Add(time.Minute)) != nil {
		t.Error("an entry is returned at its until")
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
