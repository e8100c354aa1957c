package keys_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/google/go-cmp/cmp"

	"github.com/lectern/lectern/authserver/keys"
	"github.com/lectern/lectern/internal/logtest"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/sqlstore"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
	"github.com/lectern/lectern/tenant"
)

// jwksKIDs parses a JWKS with go-jose and returns its kids in order,
// checking that every key is a public ES256 signing key.
func jwksKIDs(t *testing.T, m *keys.Manager, site tenant.ID) []string {
	t.Helper()
	raw, err := m.JWKS(context.Background(), site)
	if err != nil {
		t.Fatalf("JWKS(site %d): %v", site, err)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatalf("JWKS does not parse: %v\n%s", err, raw)
	}
	kids := []string{}
	for _, k := range set.Keys {
		if !k.IsPublic() || k.Algorithm != "ES256" || k.Use != "sig" {
			t.Errorf("JWKS key %q: public=%v alg=%q use=%q", k.KeyID, k.IsPublic(), k.Algorithm, k.Use)
		}
		kids = append(kids, k.KeyID)
	}
	return kids
}

func signingKID(t *testing.T, m *keys.Manager, site tenant.ID) string {
	t.Helper()
	sk, err := m.SigningKey(context.Background(), site)
	if err != nil {
		t.Fatalf("SigningKey(site %d): %v", site, err)
	}
	return sk.KID
}

// thumbprint computes the RFC 7638 §3.1 thumbprint of a P-256 key by hand,
// independently of go-jose.
func thumbprint(pub *ecdsa.PublicKey) string {
	b, _ := pub.Bytes() // 0x04 || X || Y, 32 bytes each
	enc := base64.RawURLEncoding.EncodeToString
	canonical := `{"crv":"P-256","kty":"EC","x":"` + enc(b[1:33]) + `","y":"` + enc(b[33:]) + `"}`
	sum := sha256.Sum256([]byte(canonical))
	return enc(sum[:])
}

func TestNewManagerRejectsBadInput(t *testing.T) {
	s := sqltest.SQLite(t)
	if _, err := keys.NewManager(nil, newKEK(t), nil); err == nil {
		t.Error("NewManager accepted a nil store")
	}
	if _, err := keys.NewManager(s, make([]byte, 16), nil); err == nil {
		t.Error("NewManager accepted a 16-byte KEK")
	}
	if _, err := keys.NewManager(s, newKEK(t), &keys.Options{Retain: -time.Second}); err == nil {
		t.Error("NewManager accepted a negative Retain")
	}
}

func TestCreateRing(t *testing.T) {
	eachStoreInBubble(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		kek := newKEK(t)
		m := newManager(t, s, kek, nil)
		site := createSite(t, s)

		k, err := m.CreateRing(ctx, site)
		if err != nil {
			t.Fatal(err)
		}
		if k.State != storage.KeyActive || k.Alg != "ES256" || !k.ActivatesAt.Equal(time.Now()) || k.SiteID != site {
			t.Errorf("CreateRing = state %q alg %q activates %v site %d; want active ES256 now at site %d",
				k.State, k.Alg, k.ActivatesAt, k.SiteID, site)
		}

		var fields map[string]string
		if err := json.Unmarshal([]byte(k.PublicJWK), &fields); err != nil {
			t.Fatalf("public JWK %s: %v", k.PublicJWK, err)
		}
		var names []string
		for name := range fields {
			names = append(names, name)
		}
		slices.Sort(names)
		if diff := cmp.Diff([]string{"alg", "crv", "kid", "kty", "use", "x", "y"}, names); diff != "" {
			t.Errorf("public JWK members (-want +got):\n%s", diff)
		}
		if fields["kty"] != "EC" || fields["crv"] != "P-256" || fields["alg"] != "ES256" || fields["use"] != "sig" || fields["kid"] != k.KID {
			t.Errorf("public JWK = %s", k.PublicJWK)
		}

		// The private key is sealed PKCS #8 of the published key, bound to
		// site and kid, and the kid is its RFC 7638 thumbprint.
		der, err := newSealer(t, kek).Open(site, k.KID, k.SealedPrivate)
		if err != nil {
			t.Fatalf("sealed private key does not open under the KEK: %v", err)
		}
		parsed, err := x509.ParsePKCS8PrivateKey(der)
		if err != nil {
			t.Fatalf("sealed private key is not PKCS #8: %v", err)
		}
		priv := parsed.(*ecdsa.PrivateKey)
		if priv.Curve != elliptic.P256() {
			t.Fatalf("curve %v, want P-256", priv.Curve.Params().Name)
		}
		if got := thumbprint(&priv.PublicKey); got != k.KID {
			t.Errorf("kid = %q, want RFC 7638 thumbprint %q", k.KID, got)
		}

		row := storedKey(t, s, site, k.KID)
		if row.State != storage.KeyActive || row.PublicJWK != k.PublicJWK || string(row.SealedPrivate) != string(k.SealedPrivate) {
			t.Errorf("stored row differs from the returned key")
		}

		sk, err := m.SigningKey(ctx, site)
		if err != nil {
			t.Fatal(err)
		}
		if sk.KID != k.KID || !sk.Public.Equal(&priv.PublicKey) || !sk.Private.Equal(priv) {
			t.Errorf("SigningKey is not the created key")
		}
		if diff := cmp.Diff([]string{k.KID}, jwksKIDs(t, m, site)); diff != "" {
			t.Errorf("JWKS kids (-want +got):\n%s", diff)
		}

		_, err = m.CreateRing(ctx, site)
		if !errors.Is(err, keys.ErrRingExists) || !errors.Is(err, storage.ErrConflict) {
			t.Fatalf("second CreateRing: err = %v, want ErrRingExists (ErrConflict)", err)
		}
	})
}

func TestSitesHaveTheirOwnKeys(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		m := newManager(t, s, newKEK(t), nil)
		a, b := createSite(t, s), createSite(t, s)
		ka, err := m.CreateRing(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		kb, err := m.CreateRing(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		if ka.KID == kb.KID {
			t.Fatal("two sites got the same kid")
		}
		ska, _ := m.SigningKey(ctx, a)
		skb, _ := m.SigningKey(ctx, b)
		if ska == nil || skb == nil || ska.Public.Equal(skb.Public) {
			t.Fatal("two sites share a signing key")
		}
		if got := jwksKIDs(t, m, a); !slices.Equal(got, []string{ka.KID}) {
			t.Errorf("site A JWKS = %v, want only %s", got, ka.KID)
		}
		if got := jwksKIDs(t, m, b); !slices.Equal(got, []string{kb.KID}) {
			t.Errorf("site B JWKS = %v, want only %s", got, kb.KID)
		}
		if _, err := m.PublicKey(ctx, a, kb.KID); !errors.Is(err, keys.ErrUnknownKey) {
			t.Errorf("site A answers site B's kid: err = %v, want ErrUnknownKey", err)
		}
		if pub, err := m.PublicKey(ctx, b, kb.KID); err != nil || !pub.Equal(skb.Public) {
			t.Errorf("PublicKey(B, kidB) = %v, %v", pub, err)
		}
	})
}

func TestJWKSVerifiesSignedTokens(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		m := newManager(t, s, newKEK(t), nil)
		site := createSite(t, s)
		if _, err := m.CreateRing(ctx, site); err != nil {
			t.Fatal(err)
		}
		sk, err := m.SigningKey(ctx, site)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := m.JWKS(ctx, site)
		if err != nil {
			t.Fatal(err)
		}
		var set jose.JSONWebKeySet
		if err := json.Unmarshal(raw, &set); err != nil {
			t.Fatal(err)
		}
		if again, _ := m.JWKS(ctx, site); &again[0] != &raw[0] {
			t.Error("JWKS is serialized again on every call")
		}

		for _, typ := range []string{"at+jwt", "JWT"} {
			t.Run(typ, func(t *testing.T) {
				payload := []byte(`{"iss":"https://x.example","sub":"u1","typ_under_test":"` + typ + `"}`)
				tok, err := sk.Sign(payload, typ)
				if err != nil {
					t.Fatal(err)
				}
				if strings.Count(tok, ".") != 2 {
					t.Fatalf("%q is not a compact JWS", tok)
				}
				headerJSON, err := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[0])
				if err != nil {
					t.Fatal(err)
				}
				var header map[string]string
				if err := json.Unmarshal(headerJSON, &header); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(map[string]string{"alg": "ES256", "kid": sk.KID, "typ": typ}, header); diff != "" {
					t.Errorf("protected header (-want +got):\n%s", diff)
				}

				jws, err := jose.ParseSignedCompact(tok, []jose.SignatureAlgorithm{jose.ES256})
				if err != nil {
					t.Fatal(err)
				}
				h := jws.Signatures[0].Protected
				if h.KeyID != sk.KID || h.Algorithm != "ES256" || h.ExtraHeaders[jose.HeaderType] != typ {
					t.Errorf("header kid=%q alg=%q typ=%v", h.KeyID, h.Algorithm, h.ExtraHeaders[jose.HeaderType])
				}
				found := set.Key(h.KeyID)
				if len(found) != 1 {
					t.Fatalf("JWKS has %d keys with kid %q, want 1", len(found), h.KeyID)
				}
				got, err := jws.Verify(found[0])
				if err != nil {
					t.Fatalf("token does not verify with the JWKS key: %v", err)
				}
				if string(got) != string(payload) {
					t.Errorf("payload = %s, want %s", got, payload)
				}
				pub, err := m.PublicKey(ctx, site, h.KeyID)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := jws.Verify(pub); err != nil {
					t.Errorf("token does not verify with PublicKey: %v", err)
				}

				// A changed payload must not verify: the check above is real.
				parts := strings.Split(tok, ".")
				parts[1] = base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"admin"}`))
				forged, err := jose.ParseSignedCompact(strings.Join(parts, "."), []jose.SignatureAlgorithm{jose.ES256})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := forged.Verify(found[0]); err == nil {
					t.Error("a forged payload verifies")
				}
			})
		}
	})
}

func TestSignConcurrently(t *testing.T) {
	s := sqltest.SQLite(t)
	ctx := context.Background()
	m := newManager(t, s, newKEK(t), nil)
	site := createSite(t, s)
	if _, err := m.CreateRing(ctx, site); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			typ := []string{"at+jwt", "JWT", ""}[i%3]
			for range 4 {
				sk, err := m.SigningKey(ctx, site)
				if err != nil {
					errs <- err
					return
				}
				tok, err := sk.Sign([]byte(`{"n":1}`), typ)
				if err != nil {
					errs <- err
					return
				}
				jws, err := jose.ParseSignedCompact(tok, []jose.SignatureAlgorithm{jose.ES256})
				if err != nil {
					errs <- err
					return
				}
				if got, _ := jws.Signatures[0].Protected.ExtraHeaders[jose.HeaderType].(string); got != typ {
					errs <- fmt.Errorf("typ = %q, want %q", got, typ)
					return
				}
				if _, err := jws.Verify(sk.Public); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestRotationLifecycle(t *testing.T) {
	eachStoreInBubble(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		t0 := time.Now()
		kek := newKEK(t)
		logger, logs := logtest.New(t)
		opts := &keys.Options{Logger: logger}
		// Two replicas over one database.
		m1 := newManager(t, s, kek, opts)
		m2 := newManager(t, s, kek, opts)
		site := createSite(t, s)

		k1, err := m1.CreateRing(ctx, site)
		if err != nil {
			t.Fatal(err)
		}
		if got := signingKID(t, m2, site); got != k1.KID {
			t.Fatalf("replica 2 signs with %q, want %q", got, k1.KID)
		}

		k2, err := m1.Rotate(ctx, site, -1)
		if err != nil {
			t.Fatal(err)
		}
		if k2.State != storage.KeyNext || !k2.ActivatesAt.Equal(t0.Add(time.Hour)) {
			t.Fatalf("Rotate = state %q activates %v; want next at %v (PrePublish)", k2.State, k2.ActivatesAt, t0.Add(time.Hour))
		}

		// Published at once, but not signing before ActivatesAt.
		if diff := cmp.Diff([]string{k1.KID, k2.KID}, jwksKIDs(t, m1, site)); diff != "" {
			t.Errorf("JWKS after rotate (-want +got):\n%s", diff)
		}
		if got := signingKID(t, m1, site); got != k1.KID {
			t.Errorf("signing with %q before activation, want %q", got, k1.KID)
		}
		// Replica 2 has not heard of the rotation until invalidated.
		if diff := cmp.Diff([]string{k1.KID}, jwksKIDs(t, m2, site)); diff != "" {
			t.Errorf("replica 2 JWKS before invalidation (-want +got):\n%s", diff)
		}
		m2.Invalidate(site)
		if diff := cmp.Diff([]string{k1.KID, k2.KID}, jwksKIDs(t, m2, site)); diff != "" {
			t.Errorf("replica 2 JWKS after invalidation (-want +got):\n%s", diff)
		}

		// At 59m30s the rings reload (TTL) and cache until the activation
		// at 60m, not until 60m30s.
		time.Sleep(59*time.Minute + 30*time.Second)
		for i, m := range []*keys.Manager{m1, m2} {
			if got := signingKID(t, m, site); got != k1.KID {
				t.Errorf("replica %d at 59m30s signs with %q, want %q", i+1, got, k1.KID)
			}
		}
		if row := storedKey(t, s, site, k2.KID); row.State != storage.KeyNext {
			t.Errorf("k2 stored as %q before activation, want next", row.State)
		}

		// At ActivatesAt both replicas notice at the same moment.
		time.Sleep(30 * time.Second)
		var wg sync.WaitGroup
		got := make([]string, 2)
		errs := make([]error, 2)
		for i, m := range []*keys.Manager{m1, m2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sk, err := m.SigningKey(ctx, site)
				if err == nil {
					got[i] = sk.KID
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		for i := range 2 {
			if errs[i] != nil || got[i] != k2.KID {
				t.Errorf("replica %d at activation: %q, %v; want %q", i+1, got[i], errs[i], k2.KID)
			}
		}
		row1, row2 := storedKey(t, s, site, k1.KID), storedKey(t, s, site, k2.KID)
		if row2.State != storage.KeyActive || !row2.ActivatesAt.Equal(t0.Add(time.Hour)) {
			t.Errorf("k2 stored as %q activating %v; want active at %v", row2.State, row2.ActivatesAt, t0.Add(time.Hour))
		}
		if row1.State != storage.KeyRetired || row1.RetiredAt == nil || !row1.RetiredAt.Equal(t0.Add(time.Hour)) {
			t.Errorf("k1 stored as %q retired %v; want retired at %v", row1.State, row1.RetiredAt, t0.Add(time.Hour))
		}
		if diff := cmp.Diff([]string{k2.KID, k1.KID}, jwksKIDs(t, m1, site)); diff != "" {
			t.Errorf("JWKS after activation (-want +got):\n%s", diff)
		}
		if _, err := m2.PublicKey(ctx, site, k1.KID); err != nil {
			t.Errorf("retired key not served: %v", err)
		}

		// Retired keys stay published for Retain (70m) after retirement.
		time.Sleep(70*time.Minute - time.Second)
		if diff := cmp.Diff([]string{k2.KID, k1.KID}, jwksKIDs(t, m1, site)); diff != "" {
			t.Errorf("JWKS 1s before Retain ends (-want +got):\n%s", diff)
		}
		time.Sleep(time.Second)
		for i, m := range []*keys.Manager{m1, m2} {
			if diff := cmp.Diff([]string{k2.KID}, jwksKIDs(t, m, site)); diff != "" {
				t.Errorf("replica %d JWKS after Retain (-want +got):\n%s", i+1, diff)
			}
			if _, err := m.PublicKey(ctx, site, k1.KID); !errors.Is(err, keys.ErrUnknownKey) {
				t.Errorf("replica %d still serves the expired key: err = %v", i+1, err)
			}
		}
		if strings.Contains(logs.String(), "level=WARN") || strings.Contains(logs.String(), "level=ERROR") {
			t.Errorf("replicas noticing the rotation together logged failures:\n%s", logs.String())
		}
		if !strings.Contains(logs.String(), "signing key activated") {
			t.Errorf("activation not logged:\n%s", logs.String())
		}
	})
}

func TestRotateImmediately(t *testing.T) {
	eachStoreInBubble(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		kek := newKEK(t)
		m1 := newManager(t, s, kek, nil)
		m2 := newManager(t, s, kek, nil)
		site := createSite(t, s)
		k1, err := m1.CreateRing(ctx, site)
		if err != nil {
			t.Fatal(err)
		}
		signingKID(t, m2, site) // replica 2 caches the ring

		k2, err := m1.Rotate(ctx, site, 0)
		if err != nil {
			t.Fatal(err)
		}
		if k2.State != storage.KeyActive {
			t.Errorf("Rotate(0) returned state %q, want active", k2.State)
		}
		if got := signingKID(t, m1, site); got != k2.KID {
			t.Errorf("signing with %q, want the new key %q", got, k2.KID)
		}
		if row := storedKey(t, s, site, k1.KID); row.State != storage.KeyRetired || row.RetiredAt == nil || !row.RetiredAt.Equal(time.Now()) {
			t.Errorf("old key stored as %q retired %v, want retired now", row.State, row.RetiredAt)
		}
		if diff := cmp.Diff([]string{k2.KID, k1.KID}, jwksKIDs(t, m1, site)); diff != "" {
			t.Errorf("JWKS (-want +got):\n%s", diff)
		}

		// Replica 2 missed the broadcast. A token signed by the new key
		// still verifies there once its cached ring is a few seconds old,
		// without waiting for the cache TTL.
		if _, err := m2.PublicKey(ctx, site, k2.KID); !errors.Is(err, keys.ErrUnknownKey) {
			t.Errorf("fresh ring reloaded for an unknown kid: err = %v", err)
		}
		time.Sleep(5 * time.Second)
		if _, err := m2.PublicKey(ctx, site, k2.KID); err != nil {
			t.Errorf("replica 2 does not find the new kid after reload: %v", err)
		}
		if got := signingKID(t, m2, site); got != k2.KID {
			t.Errorf("replica 2 signs with %q after reload, want %q", got, k2.KID)
		}
	})
}

func TestRingWithoutActiveKey(t *testing.T) {
	eachStoreInBubble(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		m := newManager(t, s, newKEK(t), nil)
		site := createSite(t, s)
		if _, err := m.SigningKey(ctx, site); !errors.Is(err, keys.ErrNoSigningKey) {
			t.Errorf("SigningKey without a ring: err = %v, want ErrNoSigningKey", err)
		}
		raw, err := m.JWKS(ctx, site)
		if err != nil || string(raw) != `{"keys":[]}` {
			t.Errorf("JWKS without a ring = %s, %v; want an empty key set", raw, err)
		}
		if _, err := m.PublicKey(ctx, site, "nope"); !errors.Is(err, keys.ErrUnknownKey) {
			t.Errorf("PublicKey without a ring: err = %v, want ErrUnknownKey", err)
		}

		next, err := m.Rotate(ctx, site, 10*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := m.SigningKey(ctx, site); !errors.Is(err, keys.ErrNoSigningKey) {
			t.Errorf("SigningKey with only a pending key: err = %v, want ErrNoSigningKey", err)
		}
		if diff := cmp.Diff([]string{next.KID}, jwksKIDs(t, m, site)); diff != "" {
			t.Errorf("JWKS (-want +got):\n%s", diff)
		}
		time.Sleep(10 * time.Minute)
		if got := signingKID(t, m, site); got != next.KID {
			t.Errorf("signing with %q, want the activated key %q", got, next.KID)
		}
	})
}

// A sealed private key row is not usable without the key-encryption key.
func TestPrivateKeyUnusableWithoutKEK(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		m1 := newManager(t, s, newKEK(t), nil)
		m2 := newManager(t, s, newKEK(t), nil) // another KEK, same rows
		site := createSite(t, s)
		k, err := m1.CreateRing(ctx, site)
		if err != nil {
			t.Fatal(err)
		}
		sk1, err := m1.SigningKey(ctx, site)
		if err != nil {
			t.Fatal(err)
		}

		_, err = m2.SigningKey(ctx, site)
		var ce *keys.CorruptKeyError
		if !errors.As(err, &ce) {
			t.Fatalf("SigningKey under another KEK: err = %v, want *CorruptKeyError", err)
		}
		if ce.Site != site || ce.KID != k.KID {
			t.Errorf("CorruptKeyError names site %d kid %q, want site %d kid %q", ce.Site, ce.KID, site, k.KID)
		}
		if !errors.Is(err, keys.ErrSealedKey) {
			t.Errorf("err = %v does not unwrap to ErrSealedKey", err)
		}
		msg := err.Error()
		if !strings.Contains(msg, fmt.Sprint(site)) || !strings.Contains(msg, k.KID) {
			t.Errorf("error %q does not name site %d and kid %q", msg, site, k.KID)
		}
		assertNoKeyMaterial(t, msg, sk1.Private)

		// Decision: public keys are not sealed, so the JWKS and PublicKey
		// keep working; tokens issued before still verify, none are signed.
		if diff := cmp.Diff([]string{k.KID}, jwksKIDs(t, m2, site)); diff != "" {
			t.Errorf("JWKS under another KEK (-want +got):\n%s", diff)
		}
		if pub, err := m2.PublicKey(ctx, site, k.KID); err != nil || !pub.Equal(sk1.Public) {
			t.Errorf("PublicKey under another KEK = %v, %v", pub, err)
		}
		// The right KEK still works on the same rows.
		if got := signingKID(t, m1, site); got != k.KID {
			t.Errorf("m1 signs with %q, want %q", got, k.KID)
		}
	})
}

func assertNoKeyMaterial(t *testing.T, msg string, priv *ecdsa.PrivateKey) {
	t.Helper()
	d, err := priv.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	for _, enc := range []string{
		hex.EncodeToString(d), base64.StdEncoding.EncodeToString(d), base64.RawURLEncoding.EncodeToString(d),
		new(big.Int).SetBytes(d).String(), base64.StdEncoding.EncodeToString(der)[:40],
	} {
		if strings.Contains(msg, enc) {
			t.Fatalf("error text contains private key material: %q", msg)
		}
	}
}

func TestCorruptRowAffectsOnlyItsSite(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		kek := newKEK(t)
		sealer := newSealer(t, kek)
		m := newManager(t, s, kek, nil)

		siteB := createSite(t, s)
		kb, err := m.CreateRing(ctx, siteB)
		if err != nil {
			t.Fatal(err)
		}
		// A donor site lends a well-formed key to build broken rows from.
		donorSite := createSite(t, s)
		donor, err := m.CreateRing(ctx, donorSite)
		if err != nil {
			t.Fatal(err)
		}
		donorKey, err := m.SigningKey(ctx, donorSite)
		if err != nil {
			t.Fatal(err)
		}
		donorDER, err := x509.MarshalPKCS8PrivateKey(donorKey.Private)
		if err != nil {
			t.Fatal(err)
		}
		privJWK, err := jose.JSONWebKey{Key: donorKey.Private, KeyID: donor.KID, Algorithm: "ES256", Use: "sig"}.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
		p384JWK, _ := jose.JSONWebKey{Key: &p384.PublicKey, KeyID: donor.KID, Algorithm: "ES256", Use: "sig"}.MarshalJSON()
		stranger, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		strangerDER, _ := x509.MarshalPKCS8PrivateKey(stranger)
		seal := func(site tenant.ID, kid string, b []byte) []byte {
			out, err := sealer.Seal(site, kid, b)
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		random := make([]byte, 120)
		rand.Read(random)

		for _, tc := range []struct {
			name string
			// row edits a copy of the donor row, re-homed at site A.
			row func(a tenant.ID, k *storage.SiteKey)
			// publicBroken: the fault is in the public JWK, so the JWKS
			// fails too; otherwise only signing fails.
			publicBroken bool
		}{
			{"random ciphertext", func(a tenant.ID, k *storage.SiteKey) { k.SealedPrivate = random }, false},
			{"row moved from another site", func(a tenant.ID, k *storage.SiteKey) {}, false},
			{"sealed for another kid", func(a tenant.ID, k *storage.SiteKey) { k.SealedPrivate = seal(a, "other-kid", donorDER) }, false},
			{"undecodable PKCS #8", func(a tenant.ID, k *storage.SiteKey) { k.SealedPrivate = seal(a, k.KID, []byte("not DER")) }, false},
			{"private key of another key pair", func(a tenant.ID, k *storage.SiteKey) { k.SealedPrivate = seal(a, k.KID, strangerDER) }, false},
			{"bad JWK JSON", func(a tenant.ID, k *storage.SiteKey) {
				k.SealedPrivate, k.PublicJWK = seal(a, k.KID, donorDER), `{"kty":"EC",`
			}, true},
			{"JWK with private parameters", func(a tenant.ID, k *storage.SiteKey) {
				k.SealedPrivate, k.PublicJWK = seal(a, k.KID, donorDER), string(privJWK)
			}, true},
			{"JWK on another curve", func(a tenant.ID, k *storage.SiteKey) {
				k.SealedPrivate, k.PublicJWK = seal(a, k.KID, donorDER), string(p384JWK)
			}, true},
			{"JWK kid differs from row", func(a tenant.ID, k *storage.SiteKey) {
				k.KID = "renamed"
				k.SealedPrivate = seal(a, k.KID, donorDER)
			}, true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				siteA := createSite(t, s)
				row := storedKey(t, s, donorSite, donor.KID)
				row.ID, row.SiteID = 0, siteA
				tc.row(siteA, &row)
				if err := s.CreateSiteKey(ctx, &row); err != nil {
					t.Fatal(err)
				}

				_, err := m.SigningKey(ctx, siteA)
				var ce *keys.CorruptKeyError
				if !errors.As(err, &ce) || ce.Site != siteA || ce.KID != row.KID {
					t.Fatalf("SigningKey(A) err = %v; want *CorruptKeyError for site %d kid %q", err, siteA, row.KID)
				}
				assertNoKeyMaterial(t, err.Error(), donorKey.Private)
				assertNoKeyMaterial(t, err.Error(), stranger)

				raw, jerr := m.JWKS(ctx, siteA)
				if tc.publicBroken {
					if !errors.As(jerr, &ce) || ce.Site != siteA || ce.KID != row.KID {
						t.Errorf("JWKS(A) = %s, %v; want *CorruptKeyError", raw, jerr)
					}
					if _, err := m.PublicKey(ctx, siteA, row.KID); !errors.As(err, &ce) {
						t.Errorf("PublicKey(A) err = %v, want *CorruptKeyError", err)
					}
				} else if diff := cmp.Diff([]string{row.KID}, jwksKIDs(t, m, siteA)); diff != "" {
					t.Errorf("JWKS(A) (-want +got):\n%s", diff)
				}
				if strings.Contains(string(raw), `"d"`) {
					t.Fatalf("JWKS publishes private parameters: %s", raw)
				}

				// Site B is unaffected, from the same Manager.
				skb, err := m.SigningKey(ctx, siteB)
				if err != nil || skb.KID != kb.KID {
					t.Fatalf("SigningKey(B) = %v, %v", skb, err)
				}
				if _, err := skb.Sign([]byte(`{}`), "at+jwt"); err != nil {
					t.Fatalf("site B cannot sign: %v", err)
				}
				if diff := cmp.Diff([]string{kb.KID}, jwksKIDs(t, m, siteB)); diff != "" {
					t.Errorf("JWKS(B) (-want +got):\n%s", diff)
				}
			})
		}
	})
}

func TestConcurrentFirstLoadsReadOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := sqltest.SQLite(t)
		ctx := context.Background()
		kek := newKEK(t)
		site := createSite(t, s)
		k, err := newManager(t, s, kek, nil).CreateRing(ctx, site)
		if err != nil {
			t.Fatal(err)
		}
		cs := &countingStore{KeyStore: s, gate: make(chan struct{})}
		m := newManager(t, cs, kek, nil)

		var wg sync.WaitGroup
		kids := make([]string, 32)
		for i := range kids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if sk, err := m.SigningKey(ctx, site); err == nil {
					kids[i] = sk.KID
				}
			}()
		}
		synctest.Wait() // every caller queued on the first load, which waits at the gate
		close(cs.gate)
		wg.Wait()
		for i, kid := range kids {
			if kid != k.KID {
				t.Fatalf("caller %d got %q, want %q", i, kid, k.KID)
			}
		}
		if n := cs.reads.Load(); n != 1 {
			t.Fatalf("%d concurrent first loads made %d store reads, want 1", len(kids), n)
		}

		// Served from memory within CacheTTL, re-read after it.
		time.Sleep(59 * time.Second)
		signingKID(t, m, site)
		jwksKIDs(t, m, site)
		if n := cs.reads.Load(); n != 1 {
			t.Errorf("reads within CacheTTL = %d, want 1", n)
		}
		time.Sleep(time.Second)
		signingKID(t, m, site)
		if n := cs.reads.Load(); n != 2 {
			t.Errorf("reads after CacheTTL = %d, want 2", n)
		}
	})
}

func TestStoreErrorIsNotCached(t *testing.T) {
	s := sqltest.SQLite(t)
	ctx := context.Background()
	kek := newKEK(t)
	site := createSite(t, s)
	if _, err := newManager(t, s, kek, nil).CreateRing(ctx, site); err != nil {
		t.Fatal(err)
	}
	cs := &countingStore{KeyStore: s}
	m := newManager(t, cs, kek, nil)
	boom := storage.ErrUnavailable
	cs.fail.Store(&boom)
	if _, err := m.SigningKey(ctx, site); !errors.Is(err, boom) {
		t.Fatalf("SigningKey with the store down: err = %v, want %v", err, boom)
	}
	if _, err := m.JWKS(ctx, site); !errors.Is(err, boom) {
		t.Fatalf("JWKS with the store down: err = %v, want %v", err, boom)
	}
	cs.fail.Store(nil)
	signingKID(t, m, site)
}

// An invalidation that arrives while a load is reading must win: the load
// that read the old rows must not cache them.
func TestInvalidateDuringLoad(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := sqltest.SQLite(t)
		ctx := context.Background()
		kek := newKEK(t)
		site := createSite(t, s)
		other := newManager(t, s, kek, nil)
		k1, err := other.CreateRing(ctx, site)
		if err != nil {
			t.Fatal(err)
		}
		cs := &countingStore{KeyStore: s, gate: make(chan struct{})}
		m := newManager(t, cs, kek, nil)

		first := make(chan string)
		go func() {
			kid := ""
			if sk, err := m.SigningKey(ctx, site); err == nil {
				kid = sk.KID
			}
			first <- kid
		}()
		synctest.Wait() // the load has read [k1] and waits at the gate
		k2, err := other.Rotate(ctx, site, 0)
		if err != nil {
			t.Fatal(err)
		}
		m.Invalidate(site)
		cs.gate <- struct{}{} // release the stale load
		if got := <-first; got != k1.KID {
			t.Fatalf("in-flight load returned %q, want %q", got, k1.KID)
		}

		go func() { cs.gate <- struct{}{} }() // let one more load through
		if got := signingKID(t, m, site); got != k2.KID {
			t.Fatalf("after Invalidate signing with %q, want %q: a stale load was cached", got, k2.KID)
		}
	})
}

func TestWarmLookupsDoNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	s := sqltest.SQLite(t)
	ctx := context.Background()
	m := newManager(t, s, newKEK(t), nil)
	site := createSite(t, s)
	k, err := m.CreateRing(ctx, site)
	if err != nil {
		t.Fatal(err)
	}
	signingKID(t, m, site)
	if n := testing.AllocsPerRun(100, func() { _, _ = m.JWKS(ctx, site) }); n != 0 {
		t.Errorf("JWKS allocates %v times per call on a warm cache", n)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = m.SigningKey(ctx, site) }); n != 0 {
		t.Errorf("SigningKey allocates %v times per call on a warm cache", n)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = m.PublicKey(ctx, site, k.KID) }); n != 0 {
		t.Errorf("PublicKey allocates %v times per call on a warm cache", n)
	}
}

// Rotations scheduled out of order, noticed only after both are due: the
// key that activated last signs; the others are retired as of then and
// stay published.
func TestRotationsNoticedLate(t *testing.T) {
	eachStoreInBubble(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := context.Background()
		t0 := time.Now()
		m := newManager(t, s, newKEK(t), nil)
		site := createSite(t, s)
		k1, err := m.CreateRing(ctx, site)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		late, err := m.Rotate(ctx, site, 30*time.Minute-time.Second) // activates at t0+30m
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		early, err := m.Rotate(ctx, site, 10*time.Minute-2*time.Second) // created later, activates at t0+10m
		if err != nil {
			t.Fatal(err)
		}

		time.Sleep(40 * time.Minute)
		if got := signingKID(t, m, site); got != late.KID {
			t.Fatalf("signing with %q, want the key that activated last %q", got, late.KID)
		}
		at := t0.Add(30 * time.Minute)
		for _, kid := range []string{k1.KID, early.KID} {
			if row := storedKey(t, s, site, kid); row.State != storage.KeyRetired || row.RetiredAt == nil || !row.RetiredAt.Equal(at) {
				t.Errorf("key %s stored as %q retired %v, want retired at %v", kid, row.State, row.RetiredAt, at)
			}
		}
		if diff := cmp.Diff([]string{late.KID, early.KID, k1.KID}, jwksKIDs(t, m, site)); diff != "" {
			t.Errorf("JWKS (-want +got):\n%s", diff)
		}
	})
}

// TestSignIsDeterministic: signatures follow RFC 6979 (docs/decisions.md):
// the same input signs to the same token, which verifies, and another input
// to another signature.
func TestSignIsDeterministic(t *testing.T) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sk := &keys.SigningKey{KID: "k1", Private: priv, Public: &priv.PublicKey}
	a, err := sk.Sign([]byte(`{"jti":"a"}`), "at+jwt")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := sk.Sign([]byte(`{"jti":"a"}`), "at+jwt")
	other, _ := sk.Sign([]byte(`{"jti":"b"}`), "at+jwt")
	if a != again {
		t.Errorf("the same payload signed twice gave two tokens:\n%s\n%s", a, again)
	}
	sig := func(tok string) string { return tok[strings.LastIndexByte(tok, '.')+1:] }
	if sig(a) == sig(other) {
		t.Error("two payloads share a signature")
	}
	for _, tok := range []string{a, other} {
		jws, err := jose.ParseSignedCompact(tok, []jose.SignatureAlgorithm{jose.ES256})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := jws.Verify(&priv.PublicKey); err != nil {
			t.Errorf("%s does not verify: %v", tok, err)
		}
	}
}
