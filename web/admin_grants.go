package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

const grantsPath = "/admin/developers/connections"

// grantRow is one grant at the site.
type grantRow struct {
	ID                   string
	ClientName, ClientID string
	ClientURL            string // the application's page, for the site's own applications
	Member, MemberName   string
	Scopes               []string
	Created, LastUsed    when
	RevokeURL            string
}

type grantListData struct {
	chrome
	Rows  []grantRow
	Pager pager
	// Filter names the application the list is narrowed to.
	FilterName, FilterClientID string
}

// grantList serves GET /admin/developers/connections: every live grant at
// the site (or of one application, ?client=), newest first, paginated.
func (h *Handler) grantList(w http.ResponseWriter, r *http.Request, rq *request) {
	ctx := r.Context()
	d := grantListData{chrome: chromeFor(rq, "admin", "connections")}
	q := r.URL.Query()
	names := h.namer(ctx, rq.site.ID)
	gq := storage.GrantQuery{At: h.now(), ClientID: q.Get("client"), Limit: pageSize}
	if gq.ClientID != "" {
		d.FilterClientID = gq.ClientID
		d.FilterName, _ = names.client(gq.ClientID)
	}
	// Only the page is read; a page number past the end shows the last page.
	gq.Offset, _ = pageOffset(q.Get("page"))
	grants, total, err := h.store.LiveGrants(ctx, rq.site.ID, gq)
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	from, _, p := paginate(total, q.Get("page"), grantsPath, q)
	if from != gq.Offset {
		gq.Offset = from
		if grants, _, err = h.store.LiveGrants(ctx, rq.site.ID, gq); err != nil {
			h.fail(w, r, rq, err)
			return
		}
	}
	d.Pager = p
	for _, g := range grants {
		name, own := names.client(g.ClientID)
		row := grantRow{
			ID: g.ID, ClientName: name, ClientID: g.ClientID, Scopes: g.Scopes,
			Created: h.when(g.CreatedAt), LastUsed: h.when(grantLastUsed(g)),
			RevokeURL: grantsPath + "/" + url.PathEscape(g.ID) + "/revoke",
		}
		if own {
			row.ClientURL = appURL(g.ClientID)
		}
		row.Member, row.MemberName = names.user(g.UserID)
		d.Rows = append(d.Rows, row)
	}
	h.render(w, r, rq, http.StatusOK, "admin_connections", "Connected apps", d, h.takeFlash(ctx, rq))
}

// namer resolves client and user names for one page, asking the store once
// per ID.
type names struct {
	ctx     context.Context
	store   Store
	site    tenant.ID
	clients map[string]*storage.Client
	users   map[string]*storage.User
}

func (h *Handler) namer(ctx context.Context, site tenant.ID) *names {
	return &names{ctx: ctx, store: h.store, site: site, clients: map[string]*storage.Client{}, users: map[string]*storage.User{}}
}

// client returns the client's name, and whether it is an application of
// the site's operators (with a page of its own). A client that is gone, or
// a Client ID Metadata Document that is not stored, shows its ID.
func (n *names) client(id string) (string, bool) {
	c, seen := n.clients[id]
	if !seen {
		c, _ = n.store.ClientByID(n.ctx, n.site, id)
		n.clients[id] = c
	}
	if c == nil {
		if u, err := url.Parse(id); err == nil && u.Scheme == "https" && u.Host != "" {
			return u.Host, false
		}
		return id, false
	}
	return c.Name, c.Source == storage.SourceAdmin && c.SiteID != nil && *c.SiteID == n.site
}

// user returns the user's e-mail address and name.
func (n *names) user(id string) (string, string) {
	u, seen := n.users[id]
	if !seen {
		u, _ = n.store.UserByID(n.ctx, id)
		n.users[id] = u
	}
	if u == nil {
		return id, ""
	}
	return u.Email, u.Name
}

// siteGrant returns a live grant of the site by ID.
func (h *Handler) siteGrant(r *http.Request, rq *request, id string) (*storage.Grant, error) {
	g, err := h.store.GrantByID(r.Context(), rq.site.ID, id)
	if err != nil {
		return nil, err
	}
	if g.SiteID != rq.site.ID || g.RevokedAt != nil || (!g.ExpiresAt.IsZero() && !g.ExpiresAt.After(h.now())) {
		return nil, storage.ErrNotFound
	}
	return g, nil
}

// grantRevokeConfirm serves GET /admin/developers/connections/{grant}/revoke.
func (h *Handler) grantRevokeConfirm(w http.ResponseWriter, r *http.Request, rq *request) {
	g, err := h.siteGrant(r, rq, r.PathValue("grant"))
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	h.renderGrantRevokeConfirm(w, r, rq, g)
}

func (h *Handler) renderGrantRevokeConfirm(w http.ResponseWriter, r *http.Request, rq *request, g *storage.Grant) {
	n := h.namer(r.Context(), rq.site.ID)
	client, _ := n.client(g.ClientID)
	member, _ := n.user(g.UserID)
	d := confirmData{
		chrome:  chromeFor(rq, "admin", "connections"),
		Message: h.t(r, rq, "web.grants.question", "Name", client, "Member", member),
		Details: []string{
			"Its access and refresh tokens stop working at once. The member can connect the application again later; it will ask for their permission again.",
		},
		Facts:  []fact{{"Application", client}, {"Member", member}, {"Permissions", scope.Join(g.Scopes)}},
		Action: grantsPath + "/" + url.PathEscape(g.ID) + "/revoke", Button: "Revoke access", Danger: true,
		CancelURL: grantsPath,
	}
	d.Narrow = true
	h.render(w, r, rq, http.StatusOK, "web_confirm", "Revoke access", d, nil)
}

// grantRevoke serves POST /admin/developers/connections/{grant}/revoke.
func (h *Handler) grantRevoke(w http.ResponseWriter, r *http.Request, rq *request) {
	g, err := h.siteGrant(r, rq, r.PathValue("grant"))
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	if !confirmed(r) {
		h.renderGrantRevokeConfirm(w, r, rq, g)
		return
	}
	if err := h.revokeGrants(r, rq, []storage.Grant{*g}, "revoked by an operator in the admin area"); err != nil {
		h.fail(w, r, rq, err)
		return
	}
	n := h.namer(r.Context(), rq.site.ID)
	client, _ := n.client(g.ClientID)
	member, _ := n.user(g.UserID)
	_ = h.setFlash(r.Context(), rq, flash{Kind: "ok", Message: h.t(r, rq, "web.grants.done", "Name", client, "Member", member)})
	seeOther(w, r, grantsPath)
}

// revokeGrants revokes grants (durably and in the revocation cache: their
// tokens are refused at once), records each, and forgets the remembered
// consent of each user and client, so that connecting again asks again.
func (h *Handler) revokeGrants(r *http.Request, rq *request, grants []storage.Grant, reason string) error {
	ctx := r.Context()
	forgotten := map[[2]string]bool{}
	for _, g := range grants {
		err := h.revoker.RevokeGrant(ctx, rq.site.ID, g.ID, h.now())
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		h.audit(r, rq, "grant.revoked", g.ID, map[string]any{"reason": reason, "client": g.ClientID, "user": g.UserID})
		key := [2]string{g.UserID, g.ClientID}
		if forgotten[key] {
			continue
		}
		forgotten[key] = true
		// Best effort: the grant is revoked either way. The cached copy the
		// authorization server reads goes too, so reconnecting asks again.
		if err := h.store.SaveConsent(ctx, &storage.Consent{SiteID: rq.site.ID, UserID: g.UserID, ClientID: g.ClientID, Scopes: []string{}}); err != nil {
			h.logger.WarnContext(ctx, "remembered consent not cleared", "grant", g.ID, "err", err)
		}
		if err := h.cache.Delete(ctx, storage.ConsentKey(rq.site.ID, g.UserID, g.ClientID)); err != nil {
			h.logger.WarnContext(ctx, "cached consent not cleared", "grant", g.ID, "err", err)
		}
	}
	return nil
}
