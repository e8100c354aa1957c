package web

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/storage"
)

const membersPath = "/admin/members"

type memberRow struct {
	Name, Email string
	Roles       []string
	Since       when
}

type invitationRow struct {
	ID                 int64
	Email, Role        string
	Sent, Expires      when
	Expired            bool
	ResendURL, Revoke  string
	ResendID, RevokeID string
	// Manage: the person may resend and revoke it (an invitation to be
	// an owner is an owner's; invitationOf refuses the others).
	Manage bool
}

type membersData struct {
	chrome
	Members     []memberRow
	Pager       pager
	Invitations []invitationRow
	Form        inviteForm
	Roles       []string
	Owner       bool
}

type inviteForm struct {
	Email, Role, Error string
}

// members serves GET /admin/members: who holds a role, the pending
// invitations (with Resend and Revoke), and the form to invite someone.
func (h *Handler) members(w http.ResponseWriter, r *http.Request, rq *request) {
	h.renderMembers(w, r, rq, http.StatusOK, inviteForm{Role: storage.RoleStudent}, h.takeFlash(r.Context(), rq))
}

func (h *Handler) renderMembers(w http.ResponseWriter, r *http.Request, rq *request, status int, form inviteForm, f *flash) {
	ctx := r.Context()
	q := r.URL.Query()
	// Only the page is read; a page number past the end shows the last page.
	offset, _ := pageOffset(q.Get("page"))
	rows, total, err := h.store.ListMembers(ctx, rq.site.ID, "", storage.Page{After: int64(offset), Limit: pageSize})
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	from, _, p := paginate(total, q.Get("page"), membersPath, q)
	if from != offset {
		if rows, _, err = h.store.ListMembers(ctx, rq.site.ID, "", storage.Page{After: int64(from), Limit: pageSize}); err != nil {
			h.fail(w, r, rq, err)
			return
		}
	}
	d := membersData{chrome: chromeFor(rq, "admin", "members"), Pager: p, Form: form,
		Owner: slices.Contains(rq.roles, storage.RoleOwner)}
	d.Roles = []string{storage.RoleStudent, storage.RoleLecturer, storage.RoleAdmin}
	if d.Owner {
		d.Roles = append(d.Roles, storage.RoleOwner)
	}
	for _, m := range rows {
		d.Members = append(d.Members, memberRow{Name: m.Name, Email: m.Email, Roles: m.Roles, Since: h.when(m.Since)})
	}
	invs, _, err := h.store.ListInvitations(ctx, rq.site.ID, storage.Page{Limit: 200})
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	now := h.now()
	for _, inv := range invs {
		id := strconv.FormatInt(inv.ID, 10)
		d.Invitations = append(d.Invitations, invitationRow{ID: inv.ID, Email: inv.Email, Role: inv.Role,
			Sent: h.when(inv.SentAt), Expires: h.until(inv.ExpiresAt), Expired: !inv.Pending(now), Manage: mayManageInvitation(&inv, rq.roles),
			ResendURL: membersPath + "/invitations/" + id + "/resend", Revoke: membersPath + "/invitations/" + id + "/revoke"})
	}
	h.render(w, r, rq, status, "admin_members", "Members", d, f)
}

// memberInvite serves POST /admin/members: an address with an account gets
// the role at once; any other is invited by e-mail.
func (h *Handler) memberInvite(w http.ResponseWriter, r *http.Request, rq *request) {
	ctx := r.Context()
	form := inviteForm{Email: strings.TrimSpace(r.PostFormValue("email")), Role: r.PostFormValue("role")}
	bad := func(status int, msg string) {
		form.Error = msg
		h.renderMembers(w, r, rq, status, form, nil)
	}
	email, err := platform.NormalizeEmail(form.Email)
	if err != nil {
		bad(http.StatusUnprocessableEntity, "Enter an e-mail address.")
		return
	}
	if !storage.ValidRole(form.Role) {
		bad(http.StatusUnprocessableEntity, "Choose a role.")
		return
	}
	if form.Role == storage.RoleOwner && !slices.Contains(rq.roles, storage.RoleOwner) {
		bad(http.StatusForbidden, "Only an owner can make someone an owner.")
		return
	}
	u, err := h.store.UserByEmail(ctx, email)
	switch {
	case err == nil:
		roles, err := h.store.RolesAt(ctx, rq.site.ID, u.ID)
		if err != nil {
			h.fail(w, r, rq, err)
			return
		}
		if slices.Contains(roles, storage.RoleOwner) && !slices.Contains(rq.roles, storage.RoleOwner) {
			bad(http.StatusForbidden, "Only an owner can change an owner's roles.")
			return
		}
		if _, err := h.platform.GrantRole(ctx, rq.site.ID, email, form.Role); err != nil {
			h.fail(w, r, rq, err)
			return
		}
		h.audit(r, rq, "role.granted", "user:"+u.ID, map[string]any{"role": form.Role})
		_ = h.setFlash(ctx, rq, flash{Kind: "ok", Message: h.t(r, rq, "web.members.granted", "Email", email, "Role", h.t(r, rq, "role."+form.Role), "Site", rq.site.Name)})
	case errors.Is(err, storage.ErrNotFound):
		inv, err := h.platform.Invite(ctx, rq.stored, email, form.Role, rq.user, rq.roles, h.now())
		if errors.Is(err, platform.ErrOwnerOnly) {
			bad(http.StatusForbidden, "Only an owner can change an invitation to be an owner.")
			return
		}
		if errors.Is(err, platform.ErrMailLimited) {
			bad(http.StatusTooManyRequests, "This address got several invitations in the last hour. Try again later.")
			return
		}
		if err != nil {
			h.fail(w, r, rq, err)
			return
		}
		h.audit(r, rq, "invitation.sent", "invitation:"+strconv.FormatInt(inv.ID, 10), map[string]any{"role": inv.Role, "email": inv.Email})
		_ = h.setFlash(ctx, rq, flash{Kind: "ok", Message: h.t(r, rq, "web.members.invited", "Email", email)})
	default:
		h.fail(w, r, rq, err)
		return
	}
	seeOther(w, r, membersPath)
}

// invitationOf reads the invitation named in the path; managing an
// invitation to be an owner is an owner's.
func (h *Handler) invitationOf(w http.ResponseWriter, r *http.Request, rq *request) *storage.Invitation {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		h.notFound(w, r, rq)
		return nil
	}
	inv, err := h.store.InvitationByID(r.Context(), rq.site.ID, id)
	if err != nil || inv.AcceptedAt != nil || inv.RevokedAt != nil {
		h.notFound(w, r, rq)
		return nil
	}
	if !mayManageInvitation(inv, rq.roles) {
		h.forbidden(w, r, rq, "Only an owner can manage an invitation to be an owner.", "")
		return nil
	}
	return inv
}

// mayManageInvitation says whether someone with roles may resend or revoke
// inv: managing an invitation to be an owner is an owner's, as granting
// the role is.
func mayManageInvitation(inv *storage.Invitation, roles []string) bool {
	return inv.Role != storage.RoleOwner || slices.Contains(roles, storage.RoleOwner)
}

// invitationResend serves POST /admin/members/invitations/{id}/resend.
func (h *Handler) invitationResend(w http.ResponseWriter, r *http.Request, rq *request) {
	inv := h.invitationOf(w, r, rq)
	if inv == nil {
		return
	}
	inv, err := h.platform.ResendInvitation(r.Context(), rq.stored, inv.ID, rq.user, h.now())
	if errors.Is(err, platform.ErrMailLimited) {
		_ = h.setFlash(r.Context(), rq, flash{Kind: "error", Message: "This address got several invitations in the last hour. Try again later."})
		seeOther(w, r, membersPath)
		return
	}
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	h.audit(r, rq, "invitation.resent", "invitation:"+strconv.FormatInt(inv.ID, 10), map[string]any{"email": inv.Email})
	_ = h.setFlash(r.Context(), rq, flash{Kind: "ok", Message: h.t(r, rq, "web.members.resent", "Email", inv.Email)})
	seeOther(w, r, membersPath)
}

func (h *Handler) renderInvitationRevoke(w http.ResponseWriter, r *http.Request, rq *request, inv *storage.Invitation) {
	d := confirmData{
		chrome:    chromeFor(rq, "admin", "members"),
		Message:   h.t(r, rq, "web.members.revoke_question", "Email", inv.Email),
		Details:   []string{"The link in the invitation stops working at once. You can invite the address again later."},
		Facts:     []fact{{"E-mail address", inv.Email}, {"Role", h.t(r, rq, "role."+inv.Role)}},
		Action:    membersPath + "/invitations/" + strconv.FormatInt(inv.ID, 10) + "/revoke",
		Button:    "Revoke invitation",
		Danger:    true,
		CancelURL: membersPath,
	}
	d.Narrow = true
	h.render(w, r, rq, http.StatusOK, "web_confirm", "Revoke invitation", d, nil)
}

// invitationRevokeConfirm serves GET .../invitations/{id}/revoke.
func (h *Handler) invitationRevokeConfirm(w http.ResponseWriter, r *http.Request, rq *request) {
	if inv := h.invitationOf(w, r, rq); inv != nil {
		h.renderInvitationRevoke(w, r, rq, inv)
	}
}

// invitationRevoke serves POST .../invitations/{id}/revoke.
func (h *Handler) invitationRevoke(w http.ResponseWriter, r *http.Request, rq *request) {
	inv := h.invitationOf(w, r, rq)
	if inv == nil {
		return
	}
	if !confirmed(r) {
		h.renderInvitationRevoke(w, r, rq, inv)
		return
	}
	if err := h.platform.RevokeInvitation(r.Context(), rq.site.ID, inv.ID, h.now()); err != nil {
		h.fail(w, r, rq, err)
		return
	}
	h.audit(r, rq, "invitation.revoked", "invitation:"+strconv.FormatInt(inv.ID, 10), map[string]any{"email": inv.Email})
	_ = h.setFlash(r.Context(), rq, flash{Kind: "ok", Message: h.t(r, rq, "web.members.revoked", "Email", inv.Email)})
	seeOther(w, r, membersPath)
}

// until is a future moment as pages show it: "in 7 days", "in 3 hours".
func (h *Handler) until(t time.Time) when {
	w := h.when(t)
	if !t.After(h.now()) {
		w.Text = "time.expired"
	}
	w.Future = true
	return w
}
