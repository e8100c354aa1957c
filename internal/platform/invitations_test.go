package platform_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/mail"
	"github.com/lectern/lectern/storage"
)

// An invitation to be an owner is an owner's to send and to change: a
// second Invite of the same address by anyone else (the admin area's
// invite form and the admin API both call Invite) is ErrOwnerOnly and
// leaves the invitation, its role and its link as the owner made them.
// Other invitations any operator may send again with another role.
func TestInviteOwnerInvitationIsAnOwners(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		tpl, err := mail.NewTemplates()
		if err != nil {
			t.Fatal(err)
		}
		e.p.Mail = &platform.Mail{Templates: tpl, From: "no-reply@example.test"}
		site := e.createSite(t, "invite-owner")
		inviter := e.createUser(t, "inviter@example.test")
		now := time.Now()
		owner, admin := []string{storage.RoleOwner}, []string{storage.RoleAdmin, storage.RoleLecturer}

		_, err = e.p.Invite(t.Context(), site, "boss@example.test", storage.RoleOwner, inviter, admin, now)
		wantErrIs(t, err, platform.ErrOwnerOnly, "an admin invites someone to be an owner")

		inv, err := e.p.Invite(t.Context(), site, "boss@example.test", storage.RoleOwner, inviter, owner, now)
		if err != nil {
			t.Fatal(err)
		}
		for _, role := range []string{storage.RoleStudent, storage.RoleLecturer, storage.RoleAdmin, storage.RoleOwner} {
			_, err := e.p.Invite(t.Context(), site, "BOSS@example.test", role, inviter, admin, now.Add(time.Minute))
			wantErrIs(t, err, platform.ErrOwnerOnly, "an admin sends the owner invitation again as "+role)
		}
		got, err := e.store.InvitationByID(t.Context(), site.ID, inv.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Role != storage.RoleOwner || string(got.TokenHash) != string(inv.TokenHash) || got.SentAt.Sub(inv.SentAt).Abs() > time.Second {
			t.Fatalf("refused invites changed the owner invitation: %+v", got)
		}

		// Expired, it is still the owner's (as resending and revoking it are).
		if err := e.store.Exec(t.Context(), "UPDATE invitations SET expires_at = created_at WHERE id = ?", inv.ID); err != nil {
			t.Fatal(err)
		}
		_, err = e.p.Invite(t.Context(), site, "boss@example.test", storage.RoleStudent, inviter, admin, now.Add(time.Minute))
		wantErrIs(t, err, platform.ErrOwnerOnly, "an admin replaces an expired owner invitation")

		// An owner may change it; then it is an admin's like any other.
		again, err := e.p.Invite(t.Context(), site, "boss@example.test", storage.RoleAdmin, inviter, owner, now.Add(time.Minute))
		if err != nil || again.ID != inv.ID || again.Role != storage.RoleAdmin {
			t.Fatalf("the owner changes the invitation: %+v, %v", again, err)
		}
		again, err = e.p.Invite(t.Context(), site, "boss@example.test", storage.RoleStudent, inviter, admin, now.Add(2*time.Minute))
		if err != nil || again.ID != inv.ID || again.Role != storage.RoleStudent {
			t.Fatalf("an admin changes an admin invitation: %+v, %v", again, err)
		}
	})
}

// The sender name is refused only where no From header carries it: the
// transport quotes the rest.
func TestCheckMailFromName(t *testing.T) {
	for _, c := range []struct {
		name    string
		wantErr error
	}{
		{"", nil},
		{"Open School", nil},
		{`Open School \`, nil},
		{`Open School" <spoof@evil.test>, "X`, nil},
		{"Schule Müller", nil},
		{strings.Repeat("ä", 200), nil},
		{strings.Repeat("ä", 201), platform.ErrInvalid},
		{"two\nlines", platform.ErrInvalid},
		{"tab\there", platform.ErrInvalid},
		{"bad \xff byte", platform.ErrInvalid},
		{`Schüler \ Lehrer`, platform.ErrSenderName},
	} {
		err := platform.CheckMailFromName(c.name)
		if c.wantErr == nil && err != nil || c.wantErr != nil && !errors.Is(err, c.wantErr) {
			t.Errorf("CheckMailFromName(%q) = %v, want %v", c.name, err, c.wantErr)
		}
		if errors.Is(err, platform.ErrSenderName) && !errors.Is(err, platform.ErrInvalid) {
			t.Errorf("CheckMailFromName(%q): %v is not ErrInvalid", c.name, err)
		}
	}
}
