package adminapi

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/storage"
)

func (h *Handler) toInvitation(inv *storage.Invitation) Invitation {
	status := InvitationStatusPending
	if !inv.Pending(h.now()) {
		status = InvitationStatusExpired
	}
	return Invitation{Kind: InvitationKindInvitation, Id: inv.ID, Email: openapi_types.Email(inv.Email), Role: Role(inv.Role), InvitedBy: inv.InvitedBy,
		CreatedAt: inv.CreatedAt, SentAt: inv.SentAt, ExpiresAt: inv.ExpiresAt, Status: status}
}

// errMailLimited: the address had as much mail as it may for now.
func errMailLimited() *problem {
	return &problem{Status: http.StatusTooManyRequests, Detail: "this address got too many invitation messages lately; try again in an hour"}
}

// inviter is the operator making the request, and the site as stored.
func (h *Handler) inviter(ctx context.Context) (*storage.User, *storage.Site, error) {
	u, err := h.store.UserByID(ctx, callerOf(ctx).token.Subject)
	if err != nil {
		return nil, nil, err
	}
	site, err := h.store.SiteByID(ctx, siteOf(ctx))
	if err != nil {
		return nil, nil, err
	}
	return u, site, nil
}

// invite creates (or sends again) the invitation of email with role, for
// an address no account has (POST /members, POST /invitations).
func (h *Handler) invite(ctx context.Context, email string, role Role) (Invitation, string, error) {
	by, site, err := h.inviter(ctx)
	if err != nil {
		return Invitation{}, "", err
	}
	inv, err := h.platform.Invite(ctx, site, email, string(role), by, callerOf(ctx).roles, h.now())
	if errors.Is(err, platform.ErrOwnerOnly) {
		return Invitation{}, "", errForbidden(strings.TrimPrefix(err.Error(), platform.ErrOwnerOnly.Error()+": "))
	}
	if errors.Is(err, platform.ErrMailLimited) {
		return Invitation{}, "", errMailLimited()
	}
	if errors.Is(err, platform.ErrInvalid) {
		return Invitation{}, "", invalidField("email", "must be an e-mail address")
	}
	if err != nil {
		return Invitation{}, "", err
	}
	h.audit(ctx, "invitation.sent", "invitation:"+strconv.FormatInt(inv.ID, 10), map[string]any{"role": inv.Role, "email": inv.Email})
	return h.toInvitation(inv), BasePath + "/invitations/" + strconv.FormatInt(inv.ID, 10), nil
}

// CreateInvitation implements POST /invitations (members:write): an
// invitation for an address no account has; an account's address is a
// conflict (POST /members gives its holder the role).
func (h *Handler) CreateInvitation(ctx context.Context, req CreateInvitationRequestObject) (CreateInvitationResponseObject, error) {
	b := req.Body
	if !b.Role.Valid() {
		return nil, invalidField("role", "must be owner, admin, lecturer or student")
	}
	if b.Role == RoleOwner && !slices.Contains(callerOf(ctx).roles, storage.RoleOwner) {
		return nil, errForbidden("only an owner may invite someone to be an owner")
	}
	var f fields
	if f.email("email", string(b.Email)); f.err() != nil {
		return nil, f.err()
	}
	switch _, err := h.store.UserByEmail(ctx, strings.TrimSpace(string(b.Email))); {
	case err == nil:
		return nil, errConflict("an account has this address: give its holder the role with POST /members", InvalidField{Field: "email", Message: "an account has this address"})
	case !errors.Is(err, storage.ErrNotFound):
		return nil, err
	}
	inv, loc, err := h.invite(ctx, string(b.Email), b.Role)
	if err != nil {
		return nil, err
	}
	return CreateInvitation201JSONResponse{Body: inv, Headers: CreateInvitation201ResponseHeaders{Location: &loc}}, nil
}

// ListInvitations implements GET /invitations (members:read).
func (h *Handler) ListInvitations(ctx context.Context, req ListInvitationsRequestObject) (ListInvitationsResponseObject, error) {
	p, err := pageOf(req.Params.Cursor, req.Params.Limit)
	if err != nil {
		return nil, err
	}
	rows, total, err := h.store.ListInvitations(ctx, siteOf(ctx), p)
	if err != nil {
		return nil, err
	}
	out := InvitationList{Items: make([]Invitation, 0, len(rows)), TotalCount: total}
	for i := range rows {
		out.Items = append(out.Items, h.toInvitation(&rows[i]))
	}
	if len(rows) == p.Limit {
		// Keyset: the next page starts after the last ID, if there is one.
		if more, _, err := h.store.ListInvitations(ctx, siteOf(ctx), storage.Page{After: rows[len(rows)-1].ID, Limit: 1}); err == nil && len(more) > 0 {
			out.NextCursor = encodeCursor(rows[len(rows)-1].ID)
		}
	}
	return ListInvitations200JSONResponse(out), nil
}

// RevokeInvitation implements DELETE /invitations/{invitationId}
// (members:write).
func (h *Handler) RevokeInvitation(ctx context.Context, req RevokeInvitationRequestObject) (RevokeInvitationResponseObject, error) {
	inv, err := h.store.InvitationByID(ctx, siteOf(ctx), req.InvitationId)
	if err != nil {
		return nil, err
	}
	if inv.Role == storage.RoleOwner && !slices.Contains(callerOf(ctx).roles, storage.RoleOwner) {
		return nil, errForbidden("only an owner may revoke an invitation to be an owner")
	}
	if err := h.platform.RevokeInvitation(ctx, siteOf(ctx), req.InvitationId, h.now()); err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil, errNotFound("no pending invitation with this id at this site")
		}
		return nil, err
	}
	h.audit(ctx, "invitation.revoked", "invitation:"+strconv.FormatInt(inv.ID, 10), map[string]any{"email": inv.Email})
	return RevokeInvitation204Response{}, nil
}

// ResendInvitation implements POST /invitations/{invitationId}/resend
// (members:write).
func (h *Handler) ResendInvitation(ctx context.Context, req ResendInvitationRequestObject) (ResendInvitationResponseObject, error) {
	inv, err := h.store.InvitationByID(ctx, siteOf(ctx), req.InvitationId)
	if err != nil {
		return nil, err
	}
	if inv.Role == storage.RoleOwner && !slices.Contains(callerOf(ctx).roles, storage.RoleOwner) {
		return nil, errForbidden("only an owner may resend an invitation to be an owner")
	}
	by, site, err := h.inviter(ctx)
	if err != nil {
		return nil, err
	}
	inv, err = h.platform.ResendInvitation(ctx, site, req.InvitationId, by, h.now())
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return nil, errNotFound("no pending invitation with this id at this site")
	case errors.Is(err, platform.ErrMailLimited):
		return nil, errMailLimited()
	case err != nil:
		return nil, err
	}
	h.audit(ctx, "invitation.resent", "invitation:"+strconv.FormatInt(inv.ID, 10), map[string]any{"email": inv.Email})
	return ResendInvitation200JSONResponse(h.toInvitation(inv)), nil
}
