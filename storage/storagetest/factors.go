package storagetest

import (
	"bytes"
	"errors"
	"testing"

	"github.com/lectern/lectern/storage"
)

// testPasskeys: passkeys belong to a site; another site's ID for the same
// passkey finds nothing and changes nothing.
func testPasskeys(t *testing.T, f *fixture) {
	u := f.user(t, "keys@x.test")
	other := f.user(t, "other@x.test")
	p := &storage.Passkey{SiteID: f.a.ID, UserID: u.ID, CredentialID: []byte("cred-1"), Name: "Laptop", Data: `{"id":"x"}`, CreatedAt: f.now}
	if err := f.s.CreatePasskey(f.ctx, p); err != nil || p.ID == 0 {
		t.Fatalf("CreatePasskey = %v (id %d)", err, p.ID)
	}
	dup := &storage.Passkey{SiteID: f.a.ID, UserID: other.ID, CredentialID: []byte("cred-1"), Name: "Dup", Data: "{}", CreatedAt: f.now}
	if err := f.s.CreatePasskey(f.ctx, dup); !errors.Is(err, storage.ErrConflict) {
		t.Errorf("CreatePasskey with a credential ID the site has = %v; want ErrConflict", err)
	}
	// The same credential ID at another site is another relying party's.
	atB := &storage.Passkey{SiteID: f.b.ID, UserID: u.ID, CredentialID: []byte("cred-1"), Name: "At B", Data: "{}", CreatedAt: f.now}
	if err := f.s.CreatePasskey(f.ctx, atB); err != nil {
		t.Fatalf("CreatePasskey at B: %v", err)
	}
	got, err := f.s.PasskeyByCredentialID(f.ctx, f.a.ID, []byte("cred-1"))
	if err != nil || got.ID != p.ID || got.Name != "Laptop" {
		t.Fatalf("PasskeyByCredentialID(A) = %+v, %v; want the Laptop passkey", got, err)
	}
	if _, err := f.s.PasskeyByCredentialID(f.ctx, f.a.ID, []byte("cred-2")); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("PasskeyByCredentialID(unknown) = %v; want ErrNotFound", err)
	}
	list, err := f.s.Passkeys(f.ctx, f.a.ID, u.ID)
	if err != nil || len(list) != 1 || list[0].ID != p.ID {
		t.Fatalf("Passkeys(A) = %+v, %v; want only the Laptop passkey", list, err)
	}
	// Counted at every site: the account's passkeys at A and B, not the
	// other user's.
	if n, err := f.s.CountPasskeys(f.ctx, u.ID); err != nil || n != 2 {
		t.Errorf("CountPasskeys = %d, %v; want 2 (one at A, one at B)", n, err)
	}
	if n, err := f.s.CountPasskeys(f.ctx, other.ID); err != nil || n != 0 {
		t.Errorf("CountPasskeys(other) = %d, %v; want 0", n, err)
	}
	// Listed at every site for the provider's support (lectern user
	// factors): the account's passkeys, by site, not the other user's.
	support, ok := f.s.(storage.FactorSupportStore)
	if !ok {
		t.Fatalf("%T does not implement storage.FactorSupportStore", f.s)
	}
	first, second := p, atB
	if f.b.ID < f.a.ID {
		first, second = atB, p
	}
	all, err := support.AllPasskeys(f.ctx, u.ID)
	if err != nil || len(all) != 2 || all[0].ID != first.ID || all[0].SiteID != first.SiteID || all[1].ID != second.ID || all[1].SiteID != second.SiteID {
		t.Errorf("AllPasskeys = %+v, %v; want the passkeys at A and B, by site", all, err)
	}
	if all, err := support.AllPasskeys(f.ctx, other.ID); err != nil || len(all) != 0 {
		t.Errorf("AllPasskeys(other) = %+v, %v; want none", all, err)
	}
	// Foreign site, foreign user: not found, nothing changed.
	if err := f.s.RenamePasskey(f.ctx, f.b.ID, u.ID, p.ID, "Hijacked"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("RenamePasskey from site B = %v; want ErrNotFound", err)
	}
	if err := f.s.RenamePasskey(f.ctx, f.a.ID, other.ID, p.ID, "Hijacked"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("RenamePasskey by another user = %v; want ErrNotFound", err)
	}
	if err := f.s.DeletePasskey(f.ctx, f.b.ID, u.ID, p.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("DeletePasskey from site B = %v; want ErrNotFound", err)
	}
	if err := f.s.PasskeyUsed(f.ctx, f.b.ID, p.ID, "{}", f.now); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("PasskeyUsed from site B = %v; want ErrNotFound", err)
	}
	if got, _ := f.s.PasskeyByCredentialID(f.ctx, f.a.ID, []byte("cred-1")); got == nil || got.Name != "Laptop" || got.Data != `{"id":"x"}` {
		t.Errorf("after foreign changes the passkey is %+v; want it unchanged", got)
	}
	if err := f.s.RenamePasskey(f.ctx, f.a.ID, u.ID, p.ID, "Work laptop"); err != nil {
		t.Fatalf("RenamePasskey: %v", err)
	}
	if err := f.s.PasskeyUsed(f.ctx, f.a.ID, p.ID, `{"id":"y"}`, f.now); err != nil {
		t.Fatalf("PasskeyUsed: %v", err)
	}
	got, _ = f.s.PasskeyByCredentialID(f.ctx, f.a.ID, []byte("cred-1"))
	if got == nil || got.Name != "Work laptop" || got.Data != `{"id":"y"}` || got.LastUsedAt == nil || !got.LastUsedAt.Equal(f.now) {
		t.Errorf("after rename and use the passkey is %+v; want the new name, data and last use", got)
	}
	if err := f.s.DeletePasskey(f.ctx, f.a.ID, u.ID, p.ID); err != nil {
		t.Fatalf("DeletePasskey: %v", err)
	}
	if list, _ := f.s.Passkeys(f.ctx, f.a.ID, u.ID); len(list) != 0 {
		t.Errorf("Passkeys after delete = %+v; want none", list)
	}
	if list, _ := f.s.Passkeys(f.ctx, f.b.ID, u.ID); len(list) != 1 {
		t.Errorf("Passkeys(B) after deleting A's = %+v; want B's passkey kept", list)
	}
}

// testTOTP: an authenticator with recovery codes; each code step and each
// recovery code is accepted once.
func testTOTP(t *testing.T, f *fixture) {
	u := f.user(t, "totp@x.test")
	if _, err := f.s.TOTPOf(f.ctx, u.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("TOTPOf before enrolment = %v; want ErrNotFound", err)
	}
	codes := [][]byte{bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)}
	if err := f.s.EnableTOTP(f.ctx, &storage.TOTP{UserID: u.ID, Secret: "SECRET1", CreatedAt: f.now}, codes); err != nil {
		t.Fatalf("EnableTOTP: %v", err)
	}
	got, err := f.s.TOTPOf(f.ctx, u.ID)
	if err != nil || got.Secret != "SECRET1" || got.LastStep != 0 {
		t.Fatalf("TOTPOf = %+v, %v", got, err)
	}
	if n, err := f.s.RecoveryCodesLeft(f.ctx, u.ID); err != nil || n != 2 {
		t.Fatalf("RecoveryCodesLeft = %d, %v; want 2", n, err)
	}
	for _, c := range []struct {
		step int64
		want bool
	}{{100, true}, {100, false}, {99, false}, {101, true}} {
		if ok, err := f.s.UseTOTPStep(f.ctx, u.ID, c.step); err != nil || ok != c.want {
			t.Errorf("UseTOTPStep(%d) = %v, %v; want %v", c.step, ok, err, c.want)
		}
	}
	if ok, err := f.s.UseRecoveryCode(f.ctx, u.ID, codes[0], f.now); err != nil || !ok {
		t.Errorf("UseRecoveryCode = %v, %v; want true", ok, err)
	}
	if ok, _ := f.s.UseRecoveryCode(f.ctx, u.ID, codes[0], f.now); ok {
		t.Error("a recovery code was accepted twice")
	}
	other := f.user(t, "other-totp@x.test")
	if ok, _ := f.s.UseRecoveryCode(f.ctx, other.ID, codes[1], f.now); ok {
		t.Error("another account's recovery code was accepted")
	}
	if n, _ := f.s.RecoveryCodesLeft(f.ctx, u.ID); n != 1 {
		t.Errorf("RecoveryCodesLeft after one use = %d; want 1", n)
	}
	// Enrolling again replaces secret and codes.
	if err := f.s.EnableTOTP(f.ctx, &storage.TOTP{UserID: u.ID, Secret: "SECRET2", CreatedAt: f.now}, codes[:1]); err != nil {
		t.Fatalf("EnableTOTP again: %v", err)
	}
	if got, _ := f.s.TOTPOf(f.ctx, u.ID); got == nil || got.Secret != "SECRET2" || got.LastStep != 0 {
		t.Errorf("after re-enrolment TOTPOf = %+v; want the new secret", got)
	}
	if n, _ := f.s.RecoveryCodesLeft(f.ctx, u.ID); n != 1 {
		t.Errorf("RecoveryCodesLeft after re-enrolment = %d; want 1 (the new set)", n)
	}
	if err := f.s.DisableTOTP(f.ctx, u.ID); err != nil {
		t.Fatalf("DisableTOTP: %v", err)
	}
	if _, err := f.s.TOTPOf(f.ctx, u.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("TOTPOf after disable = %v; want ErrNotFound", err)
	}
	if n, _ := f.s.RecoveryCodesLeft(f.ctx, u.ID); n != 0 {
		t.Errorf("RecoveryCodesLeft after disable = %d; want 0", n)
	}
	if ok, _ := f.s.UseTOTPStep(f.ctx, u.ID, 500); ok {
		t.Error("UseTOTPStep after disable accepted a code")
	}
}
