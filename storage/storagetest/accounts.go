package storagetest

import (
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/lectern/lectern/storage"
)

func randomHash() []byte {
	var b [32]byte
	_, _ = rand.Read(b[:])
	sum := sha256.Sum256(b[:])
	return sum[:]
}

// testInvitations: invitations are per site (neither site can read, renew,
// revoke or accept the other's), one pending per address, and accepting
// is single-use even when two browsers race.
func testInvitations(t *testing.T, f *fixture) {
	inviter := f.user(t, "inviter@x.test")
	mail := func() *storage.OutboxMessage {
		return &storage.OutboxMessage{Purpose: "invitation", ToAddr: "new@x.test", FromName: "A", FromAddr: "a@x.test", Subject: "s", TextBody: "t", HTMLBody: "h"}
	}
	inv := &storage.Invitation{SiteID: f.a.ID, Email: "New@X.test", Role: storage.RoleLecturer, TokenHash: randomHash(), InvitedBy: inviter.ID,
		CreatedAt: f.now, SentAt: f.now, ExpiresAt: f.now.Add(7 * day)}
	if err := f.s.CreateInvitation(f.ctx, inv, mail()); err != nil {
		t.Fatal(err)
	}
	if inv.Email != "new@x.test" {
		t.Errorf("the address is stored as %q, want it lower-cased", inv.Email)
	}
	dup := &storage.Invitation{SiteID: f.a.ID, Email: "new@x.test", Role: storage.RoleStudent, TokenHash: randomHash(), InvitedBy: inviter.ID,
		CreatedAt: f.now, SentAt: f.now, ExpiresAt: f.now.Add(day)}
	if err := f.s.CreateInvitation(f.ctx, dup, mail()); !errors.Is(err, storage.ErrConflict) {
		t.Fatalf("a second pending invitation of one address: %v, want ErrConflict", err)
	}
	// Site B may invite the same address.
	atB := &storage.Invitation{SiteID: f.b.ID, Email: "new@x.test", Role: storage.RoleStudent, TokenHash: randomHash(), InvitedBy: inviter.ID,
		CreatedAt: f.now, SentAt: f.now, ExpiresAt: f.now.Add(day)}
	if err := f.s.CreateInvitation(f.ctx, atB, nil); err != nil {
		t.Fatal(err)
	}
	// Isolation.
	if _, err := f.s.InvitationByID(f.ctx, f.b.ID, inv.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("site B reads site A's invitation: %v", err)
	}
	if _, err := f.s.InvitationByTokenHash(f.ctx, f.b.ID, inv.TokenHash); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("site A's token resolves at site B: %v", err)
	}
	if err := f.s.RevokeInvitation(f.ctx, f.b.ID, inv.ID, f.now); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("site B revokes site A's invitation: %v", err)
	}
	if _, err := f.s.RenewInvitation(f.ctx, f.b.ID, inv.ID, storage.InvitationUpdate{TokenHash: randomHash(), Role: storage.RoleOwner, SentAt: f.now, ExpiresAt: f.now.Add(day)}, nil); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("site B renews site A's invitation: %v", err)
	}
	invitee := &storage.User{ID: "usr_invitee", Email: "new@x.test", Name: "New"}
	if err := f.s.AcceptInvitation(f.ctx, f.b.ID, inv.ID, invitee.ID, invitee, f.now); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("site B accepts site A's invitation: %v", err)
	}
	if _, err := f.s.UserByEmail(f.ctx, "new@x.test"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("a refused acceptance created the account: %v", err)
	}
	list, n, err := f.s.ListInvitations(f.ctx, f.a.ID, storage.Page{Limit: 10})
	if err != nil || n != 1 || len(list) != 1 || list[0].ID != inv.ID {
		t.Fatalf("site A's pending invitations: %v (%d), %v", list, n, err)
	}
	if m, err := f.s.PendingInvitationByEmail(f.ctx, f.a.ID, "NEW@x.test"); err != nil || m.ID != inv.ID {
		t.Fatalf("PendingInvitationByEmail: %v, %v", m, err)
	}

	// Renewing replaces the token: the old hash no longer resolves.
	oldHash := inv.TokenHash
	renewed, err := f.s.RenewInvitation(f.ctx, f.a.ID, inv.ID, storage.InvitationUpdate{TokenHash: randomHash(), Role: storage.RoleStudent,
		InvitedBy: inviter.ID, SentAt: f.now, ExpiresAt: f.now.Add(7 * day)}, mail())
	if err != nil || renewed.Role != storage.RoleStudent {
		t.Fatalf("renewing: %+v, %v", renewed, err)
	}
	if _, err := f.s.InvitationByTokenHash(f.ctx, f.a.ID, oldHash); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("the replaced token still resolves: %v", err)
	}

	// Two browsers accept at once: one wins; the account exists once.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		u := &storage.User{ID: "usr_racer" + string(rune('a'+i)), Email: "new@x.test", Name: "New"}
		wg.Go(func() { errs[i] = f.s.AcceptInvitation(f.ctx, f.a.ID, inv.ID, u.ID, u, f.now) })
	}
	wg.Wait()
	if (errs[0] == nil) == (errs[1] == nil) {
		t.Fatalf("two acceptances of one invitation: %v, %v; want exactly one to succeed", errs[0], errs[1])
	}
	u, err := f.s.UserByEmail(f.ctx, "new@x.test")
	if err != nil || !u.EmailVerified {
		t.Fatalf("the accepted account: %+v, %v", u, err)
	}
	if roles := f.roles(t, f.a, u.ID); len(roles) != 1 || roles[0] != storage.RoleStudent {
		t.Fatalf("roles after accepting: %v", roles)
	}
	if roles := f.roles(t, f.b, u.ID); len(roles) != 0 {
		t.Fatalf("accepting at A gave roles at B: %v", roles)
	}
	if err := f.s.RevokeInvitation(f.ctx, f.a.ID, inv.ID, f.now); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("revoking an accepted invitation: %v", err)
	}
	// An expired invitation cannot be accepted.
	if err := f.s.AcceptInvitation(f.ctx, f.b.ID, atB.ID, u.ID, nil, f.now.Add(2*day)); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("accepting an expired invitation: %v", err)
	}
}

// testAccountTokens: a mailed link works once, not after it expired, and
// a password reset uses up the account's other reset links.
func testAccountTokens(t *testing.T, f *fixture) {
	u := f.user(t, "reset@x.test")
	tok := func(purpose string, ttl time.Duration) *storage.AccountToken {
		t.Helper()
		at := &storage.AccountToken{Purpose: purpose, SiteID: f.a.ID, UserID: u.ID, Email: u.Email, TokenHash: randomHash(), CreatedAt: f.now, ExpiresAt: f.now.Add(ttl)}
		if err := f.s.CreateAccountToken(f.ctx, at, nil); err != nil {
			t.Fatal(err)
		}
		return at
	}
	first, second := tok(storage.TokenPasswordReset, time.Hour), tok(storage.TokenPasswordReset, time.Hour)
	if got, err := f.s.AccountTokenByHash(f.ctx, storage.TokenSignUp, first.TokenHash); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a reset token found as a sign-up token: %+v, %v", got, err)
	}
	if err := f.s.ResetPassword(f.ctx, first.ID, u.ID, "new-hash", f.now.Add(2*time.Hour)); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("an expired reset link worked: %v", err)
	}
	if err := f.s.ResetPassword(f.ctx, first.ID, u.ID, "new-hash", f.now); err != nil {
		t.Fatal(err)
	}
	if err := f.s.ResetPassword(f.ctx, first.ID, u.ID, "other-hash", f.now); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a reset link worked twice: %v", err)
	}
	if err := f.s.ResetPassword(f.ctx, second.ID, u.ID, "other-hash", f.now); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("another reset link of the account still worked after a reset: %v", err)
	}
	got, err := f.s.UserByID(f.ctx, u.ID)
	if err != nil || got.PasswordHash != "new-hash" {
		t.Fatalf("after the reset: %+v, %v", got, err)
	}

	// Sign-up: the account appears only when the link is used.
	su := &storage.AccountToken{Purpose: storage.TokenSignUp, SiteID: f.b.ID, Email: "Fresh@x.test", Name: "Fresh", PasswordHash: "h",
		TokenHash: randomHash(), CreatedAt: f.now, ExpiresAt: f.now.Add(day)}
	if err := f.s.CreateAccountToken(f.ctx, su, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.UserByEmail(f.ctx, "fresh@x.test"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("a sign-up made an account before it was verified: %v", err)
	}
	nu := &storage.User{ID: "usr_fresh", Name: "Fresh", PasswordHash: "h"}
	if err := f.s.CompleteSignUp(f.ctx, su.ID, nu, storage.RoleStudent, f.now); err != nil {
		t.Fatal(err)
	}
	if roles := f.roles(t, f.b, nu.ID); len(roles) != 1 || roles[0] != storage.RoleStudent {
		t.Fatalf("the signed-up account's roles at its site: %v", roles)
	}
	if roles := f.roles(t, f.a, nu.ID); len(roles) != 0 {
		t.Fatalf("signing up at B gave roles at A: %v", roles)
	}

	// E-mail change: a taken address is a conflict and changes nothing.
	ec := tok(storage.TokenEmailChange, day)
	ec2 := &storage.AccountToken{Purpose: storage.TokenEmailChange, SiteID: f.a.ID, UserID: u.ID, Email: "fresh@x.test", TokenHash: randomHash(), CreatedAt: f.now, ExpiresAt: f.now.Add(day)}
	if err := f.s.CreateAccountToken(f.ctx, ec2, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.s.ChangeEmail(f.ctx, ec2.ID, u.ID, "fresh@x.test", f.now); !errors.Is(err, storage.ErrConflict) {
		t.Errorf("changing to a taken address: %v, want ErrConflict", err)
	}
	_ = ec
	if got, _ := f.s.UserByID(f.ctx, u.ID); got.Email != "reset@x.test" {
		t.Errorf("a refused change changed the address to %s", got.Email)
	}
}

// testOutboxClaims: claims are leased; a claimed message is not claimed
// again until its lease ends; a sent message never again.
func testOutboxClaims(t *testing.T, f *fixture) {
	msg := &storage.OutboxMessage{Purpose: "p", ToAddr: "x@x.test", FromName: "A", FromAddr: "a@x.test", Subject: "s", TextBody: "t", HTMLBody: "h", CreatedAt: f.now}
	if err := f.s.EnqueueMail(f.ctx, msg); err != nil {
		t.Fatal(err)
	}
	got, err := f.s.ClaimMail(f.ctx, "one", f.now, f.now.Add(time.Minute), 10)
	if err != nil || len(got) != 1 || got[0].Attempts != 1 || got[0].TextBody != "t" {
		t.Fatalf("first claim: %+v, %v", got, err)
	}
	if again, err := f.s.ClaimMail(f.ctx, "two", f.now.Add(30*time.Second), f.now.Add(2*time.Minute), 10); err != nil || len(again) != 0 {
		t.Fatalf("a leased message was claimed again: %+v, %v", again, err)
	}
	// The first sender died: after the lease another may send it.
	late, err := f.s.ClaimMail(f.ctx, "two", f.now.Add(2*time.Minute), f.now.Add(3*time.Minute), 10)
	if err != nil || len(late) != 1 || late[0].Attempts != 2 {
		t.Fatalf("claim after the lease ended: %+v, %v", late, err)
	}
	if err := f.s.MailSent(f.ctx, msg.ID, "one", f.now); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a sender whose lease was taken over marked the message sent: %v", err)
	}
	if err := f.s.MailSent(f.ctx, msg.ID, "two", f.now); err != nil {
		t.Fatal(err)
	}
	if after, _ := f.s.ClaimMail(f.ctx, "three", f.now.Add(time.Hour), f.now.Add(2*time.Hour), 10); len(after) != 0 {
		t.Fatalf("a sent message was claimed: %+v", after)
	}
	if waiting, dead, err := f.s.MailCounts(f.ctx); err != nil || waiting != 0 || dead != 0 {
		t.Fatalf("counts after sending: %d %d %v", waiting, dead, err)
	}
}
