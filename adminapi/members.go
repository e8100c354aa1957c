package adminapi

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/lectern/lectern/storage"
)

func toMember(u *storage.User, roles []string) Member {
	m := Member{UserId: u.ID, Email: u.Email, Name: u.Name, Roles: make([]Role, 0, len(roles))}
	for _, r := range roles {
		m.Roles = append(m.Roles, Role(r))
	}
	return m
}

// member returns a person with their roles at the site; someone without a
// role here is 404.
func (h *Handler) member(ctx context.Context, userID string) (*storage.User, []string, error) {
	roles, err := h.store.RolesAt(ctx, siteOf(ctx), userID)
	if err != nil {
		return nil, nil, err
	}
	if len(roles) == 0 {
		return nil, nil, errNotFound("no such member at this site")
	}
	u, err := h.store.UserByID(ctx, userID)
	if err != nil {
		return nil, nil, err
	}
	return u, roles, nil
}

// ListMembers implements GET /members (members:read).
func (h *Handler) ListMembers(ctx context.Context, req ListMembersRequestObject) (ListMembersResponseObject, error) {
	p, err := pageOf(req.Params.Cursor, req.Params.Limit)
	if err != nil {
		return nil, err
	}
	role := ""
	if req.Params.Role != nil {
		if !req.Params.Role.Valid() {
			return nil, errBadRequest("unknown role", InvalidField{Field: "role", Message: "must be owner, admin, lecturer or student"})
		}
		role = string(*req.Params.Role)
	}
	rows, total, err := h.store.ListMembers(ctx, siteOf(ctx), role, p)
	if err != nil {
		return nil, err
	}
	out := MemberList{Items: make([]Member, 0, len(rows)), TotalCount: total, NextCursor: offsetNext(p, len(rows), total)}
	for _, r := range rows {
		m := toMember(&storage.User{ID: r.UserID, Email: r.Email, Name: r.Name}, r.Roles)
		m.Since = ptr(r.Since)
		out.Items = append(out.Items, m)
	}
	return ListMembers200JSONResponse(out), nil
}

// GetMember implements GET /members/{userId} (members:read).
func (h *Handler) GetMember(ctx context.Context, req GetMemberRequestObject) (GetMemberResponseObject, error) {
	u, roles, err := h.member(ctx, req.UserId)
	if err != nil {
		return nil, err
	}
	return GetMember200JSONResponse(toMember(u, roles)), nil
}

// GrantRole implements POST /members (members:write). Only an owner makes
// another owner or changes an owner's roles.
func (h *Handler) GrantRole(ctx context.Context, req GrantRoleRequestObject) (GrantRoleResponseObject, error) {
	b := req.Body
	if !b.Role.Valid() {
		return nil, invalidField("role", "must be owner, admin, lecturer or student")
	}
	if b.Role == RoleOwner && !slices.Contains(callerOf(ctx).roles, storage.RoleOwner) {
		return nil, errForbidden("only an owner may make someone an owner")
	}
	var f fields
	if f.email("email", string(b.Email)); f.err() != nil {
		return nil, f.err()
	}
	u, err := h.store.UserByEmail(ctx, strings.TrimSpace(string(b.Email)))
	if errors.Is(err, storage.ErrNotFound) {
		// No account has the address: invite it.
		inv, loc, err := h.invite(ctx, string(b.Email), b.Role)
		if err != nil {
			return nil, err
		}
		return GrantRole201JSONResponse{Body: inv, Headers: GrantRole201ResponseHeaders{Location: &loc}}, nil
	}
	if err != nil {
		return nil, err
	}
	site := siteOf(ctx)
	before, err := h.store.RolesAt(ctx, site, u.ID)
	if err != nil {
		return nil, err
	}
	// Granting a role the person already holds changes nothing, so it is
	// answered for anyone; a change to an owner's roles is an owner's.
	if !slices.Contains(before, string(b.Role)) && slices.Contains(before, storage.RoleOwner) &&
		!slices.Contains(callerOf(ctx).roles, storage.RoleOwner) {
		return nil, errForbidden("only an owner may change an owner's roles")
	}
	if !slices.Contains(before, string(b.Role)) {
		if _, err := h.platform.GrantRole(ctx, site, u.Email, string(b.Role)); err != nil {
			return nil, err
		}
		h.audit(ctx, "role.granted", "user:"+u.ID, map[string]any{"role": string(b.Role)})
	}
	roles, err := h.store.RolesAt(ctx, site, u.ID)
	if err != nil {
		return nil, err
	}
	return GrantRole200JSONResponse(toMember(u, roles)), nil
}

// RevokeRole implements DELETE /members/{userId}/roles/{role}
// (members:write). Admins cannot touch an owner's roles, and the last
// owner stays one. The person's tokens lose what the role allowed at once:
// every request checks the caller's roles.
func (h *Handler) RevokeRole(ctx context.Context, req RevokeRoleRequestObject) (RevokeRoleResponseObject, error) {
	if !req.Role.Valid() {
		return nil, errBadRequest("unknown role", InvalidField{Field: "role", Message: "must be owner, admin, lecturer or student"})
	}
	u, roles, err := h.member(ctx, req.UserId)
	if err != nil {
		return nil, err
	}
	role := string(req.Role)
	if !slices.Contains(roles, role) {
		return nil, errNotFound("the member does not hold this role")
	}
	if slices.Contains(roles, storage.RoleOwner) && !slices.Contains(callerOf(ctx).roles, storage.RoleOwner) {
		return nil, errForbidden("only an owner may change an owner's roles")
	}
	site := siteOf(ctx)
	if role == storage.RoleOwner {
		_, owners, err := h.store.ListMembers(ctx, site, storage.RoleOwner, storage.Page{Limit: 1})
		if err != nil {
			return nil, err
		}
		if owners <= 1 {
			return nil, errConflict("the site's last owner cannot stop being one; make someone else an owner first")
		}
	}
	if _, err := h.platform.RevokeRole(ctx, site, u.Email, role); err != nil {
		return nil, err
	}
	h.audit(ctx, "role.revoked", "user:"+u.ID, map[string]any{"role": role})
	left, err := h.store.RolesAt(ctx, site, u.ID)
	if err != nil {
		return nil, err
	}
	return RevokeRole200JSONResponse(toMember(u, left)), nil
}
