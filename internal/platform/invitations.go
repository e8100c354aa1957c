package platform

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	lmail "github.com/lectern/lectern/mail"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// ErrOwnerOnly: the change is an owner's to make, and the person asking
// holds no owner role at the site. Making someone an owner is one; so is
// changing an invitation to be an owner, since sending it again with
// another role would take the role and the link away from the person an
// owner invited.
var ErrOwnerOnly = errors.New("only an owner may do this")

// Invite invites email to site with role, or, when a pending invitation of
// that address exists, sends it again with the new role (a fresh link; the
// old one stops working). inviterRoles are the inviter's roles at the site:
// an invitation to be an owner, new or pending (expired or not), is an
// owner's to send or change (ErrOwnerOnly). The caller has checked that no
// account has the address.
func (p *Platform) Invite(ctx context.Context, site *storage.Site, email, role string, inviter *storage.User, inviterRoles []string, now time.Time) (*storage.Invitation, error) {
	email, err := NormalizeEmail(email)
	if err != nil {
		return nil, err
	}
	if !storage.ValidRole(role) {
		return nil, fmt.Errorf("%w: role %q is not one of owner, admin, lecturer, student", ErrInvalid, role)
	}
	owner := slices.Contains(inviterRoles, storage.RoleOwner)
	if role == storage.RoleOwner && !owner {
		return nil, fmt.Errorf("%w: only an owner may invite someone to be an owner", ErrOwnerOnly)
	}
	existing, err := p.Store.PendingInvitationByEmail(ctx, site.ID, email)
	switch {
	case err == nil:
		if existing.Role == storage.RoleOwner && !owner {
			return nil, fmt.Errorf("%w: the pending invitation of this address is to be an owner; only an owner may change it", ErrOwnerOnly)
		}
		return p.renew(ctx, site, existing.ID, email, role, inviter, now)
	case !errors.Is(err, storage.ErrNotFound):
		return nil, err
	}
	if err := p.allowMail(ctx, lmail.KindInvitation, email); err != nil {
		return nil, err
	}
	tok, hash := NewLinkToken()
	inv := &storage.Invitation{SiteID: site.ID, Email: email, Role: role, TokenHash: hash, InvitedBy: inviter.ID,
		CreatedAt: now, SentAt: now, ExpiresAt: now.Add(InvitationLifetime)}
	m, err := p.invitationMail(ctx, site, inv, tok, inviter)
	if err != nil {
		return nil, err
	}
	if err := p.Store.CreateInvitation(ctx, inv, m); err != nil {
		if errors.Is(err, storage.ErrConflict) {
			// Another request invited the same address a moment ago.
			if again, gerr := p.Store.PendingInvitationByEmail(ctx, site.ID, email); gerr == nil {
				if again.Role == storage.RoleOwner && !owner {
					return nil, fmt.Errorf("%w: the pending invitation of this address is to be an owner; only an owner may change it", ErrOwnerOnly)
				}
				return again, nil
			}
		}
		return nil, err
	}
	p.wake()
	return inv, nil
}

// ResendInvitation mails a pending invitation again with a fresh link and
// expiry; the old link stops working.
func (p *Platform) ResendInvitation(ctx context.Context, site *storage.Site, id int64, inviter *storage.User, now time.Time) (*storage.Invitation, error) {
	inv, err := p.Store.InvitationByID(ctx, site.ID, id)
	if err != nil {
		return nil, err
	}
	if inv.AcceptedAt != nil || inv.RevokedAt != nil {
		return nil, storage.ErrNotFound
	}
	return p.renew(ctx, site, id, inv.Email, inv.Role, inviter, now)
}

func (p *Platform) renew(ctx context.Context, site *storage.Site, id int64, email, role string, inviter *storage.User, now time.Time) (*storage.Invitation, error) {
	if err := p.allowMail(ctx, lmail.KindInvitation, email); err != nil {
		return nil, err
	}
	tok, hash := NewLinkToken()
	draft := &storage.Invitation{Email: email, Role: role}
	m, err := p.invitationMail(ctx, site, draft, tok, inviter)
	if err != nil {
		return nil, err
	}
	inv, err := p.Store.RenewInvitation(ctx, site.ID, id, storage.InvitationUpdate{
		TokenHash: hash, Role: role, InvitedBy: inviter.ID, SentAt: now, ExpiresAt: now.Add(InvitationLifetime)}, m)
	if err != nil {
		return nil, err
	}
	p.wake()
	return inv, nil
}

// invitationMail is in the site's default language: the invitee may have
// no account, and the inviter's language need not be theirs.
func (p *Platform) invitationMail(ctx context.Context, site *storage.Site, inv *storage.Invitation, tok string, inviter *storage.User) (*storage.OutboxMessage, error) {
	return p.compose(ctx, lmail.KindInvitation, site, "", lmail.Data{
		To: inv.Email, Link: link(site, "/invitations/accept", tok), Role: inv.Role,
		InvitedBy: inviter.Name, ValidDays: int(InvitationLifetime / (24 * time.Hour)),
	})
}

// RevokeInvitation revokes a pending invitation: its link stops working.
func (p *Platform) RevokeInvitation(ctx context.Context, site tenant.ID, id int64, now time.Time) error {
	return p.Store.RevokeInvitation(ctx, site, id, now)
}

// InvitationByLink finds the invitation a link's token names at site:
// ErrLinkInvalid when there is none here (a mistyped link, another site's),
// ErrLinkExpired (with the invitation) when it was accepted, revoked or is
// too old.
func (p *Platform) InvitationByLink(ctx context.Context, site tenant.ID, tok string, now time.Time) (*storage.Invitation, error) {
	if !validLinkToken(tok) {
		return nil, ErrLinkInvalid
	}
	inv, err := p.Store.InvitationByTokenHash(ctx, site, HashLinkToken(tok))
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return nil, ErrLinkInvalid
	case err != nil:
		return nil, err
	case !sameHash(inv.TokenHash, tok):
		return nil, ErrLinkInvalid
	case !inv.Pending(now):
		return inv, ErrLinkExpired
	}
	return inv, nil
}

// AcceptInvitationNew accepts the invitation of the link with a new
// account (name and password). When an account with the address appeared
// meanwhile, it is storage.ErrConflict: the person signs in instead. The
// password is hashed with hash (HashPassword).
func (p *Platform) AcceptInvitationNew(ctx context.Context, site tenant.ID, tok, name, pw string, hash Hasher, now time.Time) (*storage.User, error) {
	inv, err := p.InvitationByLink(ctx, site, tok, now)
	if err != nil {
		return nil, err
	}
	u, err := p.newUser(ctx, inv.Email, name, pw, hash)
	if err != nil {
		return nil, err
	}
	if err := p.Store.AcceptInvitation(ctx, site, inv.ID, u.ID, u, now); err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil, ErrLinkExpired
		}
		return nil, err
	}
	p.forgetRoles(ctx, site, u.ID)
	return u, nil
}

// AcceptInvitationAs accepts the invitation of the link for an existing
// account, which must have the invited address.
func (p *Platform) AcceptInvitationAs(ctx context.Context, site tenant.ID, tok string, u *storage.User, now time.Time) error {
	inv, err := p.InvitationByLink(ctx, site, tok, now)
	if err != nil {
		return err
	}
	if !strings.EqualFold(inv.Email, u.Email) {
		return fmt.Errorf("%w: the invitation is for another e-mail address", ErrInvalid)
	}
	if err := p.Store.AcceptInvitation(ctx, site, inv.ID, u.ID, nil, now); err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return ErrLinkExpired
		}
		return err
	}
	p.forgetRoles(ctx, site, u.ID)
	return nil
}
