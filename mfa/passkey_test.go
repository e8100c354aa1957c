package mfa

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

var testSite = &tenant.Site{ID: 3, Name: "Demo Academy", Origin: "https://academy.test"}

// registered is a passkey of a new account at testSite, made by a
// software authenticator whose counter starts at count.
func registered(t *testing.T, count uint32) (*Party, *memStore, *softKey, *storage.User) {
	t.Helper()
	ctx := context.Background()
	u := &storage.User{ID: "usr_clone", Email: "ada@example.test", Name: "Ada"}
	store := newMemStore(u)
	p, err := PartyOf(testSite)
	if err != nil {
		t.Fatal(err)
	}
	key := newSoftKey(t, testSite, "academy.test")
	acct, err := AccountAt(ctx, store, testSite.ID, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	c := &Ceremony{}
	if _, err := p.BeginRegistration(acct, c); err != nil {
		t.Fatal(err)
	}
	if _, err := p.FinishRegistration(ctx, store, acct, c, key.register(c, count), "Laptop", time.Now()); err != nil {
		t.Fatalf("registering the software passkey: %v", err)
	}
	return p, store, key, u
}

// signIn answers a sign-in at p with key's counter at count, as the second
// factor of u (FinishLogin) or without an account named (discoverable).
func signIn(t *testing.T, p *Party, store *memStore, key *softKey, u *storage.User, discoverable bool, count uint32) error {
	t.Helper()
	ctx := context.Background()
	c := &Ceremony{}
	if discoverable {
		if _, err := p.BeginDiscoverable(c); err != nil {
			t.Fatal(err)
		}
		_, err := p.FinishDiscoverable(ctx, store, c, key.assert(c, count), time.Now())
		return err
	}
	acct, err := AccountAt(ctx, store, testSite.ID, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	c.UserID, c.Step = u.ID, "step"
	if _, err := p.BeginLogin(acct, c); err != nil {
		t.Fatal(err)
	}
	return p.FinishLogin(ctx, store, acct, c, key.assert(c, count), time.Now())
}

func storedCount(t *testing.T, store *memStore) uint32 {
	t.Helper()
	keys, _ := store.Passkeys(context.Background(), testSite.ID, "usr_clone")
	if len(keys) != 1 {
		t.Fatalf("%d passkeys stored; want 1", len(keys))
	}
	c, err := DecodeCredential(keys[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	if c.Authenticator.CloneWarning {
		t.Error("a clone warning was stored")
	}
	return c.Authenticator.SignCount
}

// A passkey whose nonzero signature counter does not advance is a copy of
// its key used beside the original (audit P, finding 5): refused with
// ErrCloned and audited, both as a second factor and alone, and the
// stored passkey is left as it was, so the original keeps working.
func TestClonedPasskeyRefused(t *testing.T) {
	for _, discoverable := range []bool{false, true} {
		name := map[bool]string{false: "second factor", true: "passkey alone"}[discoverable]
		t.Run(name, func(t *testing.T) {
			p, store, key, u := registered(t, 1)
			if err := signIn(t, p, store, key, u, discoverable, 5); err != nil {
				t.Fatalf("the original at count 5: %v", err)
			}
			if got := storedCount(t, store); got != 5 {
				t.Fatalf("stored count %d after a sign-in at 5", got)
			}
			for _, count := range []uint32{3, 5, 1} {
				if err := signIn(t, p, store, key, u, discoverable, count); !errors.Is(err, ErrCloned) {
					t.Errorf("a copy at count %d (5 seen): %v; want ErrCloned", count, err)
				}
			}
			if got := storedCount(t, store); got != 5 {
				t.Errorf("stored count %d after refused copies; want 5 kept", got)
			}
			var cloned []storage.AuditEvent
			for _, e := range store.audit {
				if e.Action == "login.passkey_cloned" {
					cloned = append(cloned, e)
				}
			}
			if len(cloned) != 3 || cloned[0].SiteID != testSite.ID || cloned[0].Actor != u.ID || cloned[0].Details["passkey"] != "Laptop" {
				t.Errorf("audit = %+v; want three login.passkey_cloned events of the Laptop passkey", store.audit)
			}
			// The original, ahead of every copy, still signs in.
			if err := signIn(t, p, store, key, u, discoverable, 6); err != nil {
				t.Errorf("the original at count 6 after the copies: %v", err)
			}
			if got := storedCount(t, store); got != 6 {
				t.Errorf("stored count %d; want 6", got)
			}
		})
	}
}

// Synced passkeys keep their counter at 0: never a clone.
func TestZeroCounterPasskeyAccepted(t *testing.T) {
	p, store, key, u := registered(t, 0)
	for i := range 3 {
		if err := signIn(t, p, store, key, u, i%2 == 1, 0); err != nil {
			t.Fatalf("sign-in %d with counter 0: %v", i, err)
		}
	}
	if slices.Contains(store.actions(), "login.passkey_cloned") {
		t.Error("a counter of 0 was audited as a clone")
	}
}

// A sign-in's ceremony names its person too, but never adds a passkey,
// and a registration's never signs in.
func TestCeremoniesKeepTheirPurpose(t *testing.T) {
	ctx := context.Background()
	p, store, key, u := registered(t, 1)
	acct, err := AccountAt(ctx, store, testSite.ID, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	login := &Ceremony{UserID: u.ID, Step: "step"}
	if _, err := p.BeginLogin(acct, login); err != nil {
		t.Fatal(err)
	}
	other := newSoftKey(t, testSite, "academy.test")
	if _, err := p.FinishRegistration(ctx, store, acct, login, other.register(login, 1), "Sneaky", time.Now()); err == nil {
		t.Error("a sign-in's ceremony added a passkey")
	}
	reg := &Ceremony{}
	if _, err := p.BeginRegistration(acct, reg); err != nil {
		t.Fatal(err)
	}
	if err := p.FinishLogin(ctx, store, acct, reg, key.assert(reg, 9), time.Now()); err == nil {
		t.Error("a registration's ceremony signed in")
	}
}

// Before clones were refused, the warning was stored with the passkey:
// such a passkey still signs in when its counter advances.
func TestStoredCloneWarningDoesNotStick(t *testing.T) {
	p, store, key, u := registered(t, 1)
	store.mu.Lock()
	c, err := DecodeCredential(store.passkeys[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	c.Authenticator.CloneWarning = true
	store.passkeys[0].Data, _ = EncodeCredential(c)
	store.mu.Unlock()
	if err := signIn(t, p, store, key, u, false, 2); err != nil {
		t.Fatalf("a passkey stored with a clone warning, counter advancing: %v", err)
	}
	if got := storedCount(t, store); got != 2 {
		t.Errorf("stored count %d; want 2", got)
	}
}
