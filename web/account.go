package web

import (
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/lectern/lectern/storage"
)

const connectionsPath = "/account/connections"

// connectedApp is an application the member authorized: all of their live
// grants to one client, shown as one entry (people think in apps, not in
// authorizations).
type connectedApp struct {
	Name, ClientID string
	// Host is where the application sends the member back (or publishes
	// its Client ID Metadata Document), to tell apps of the same name apart.
	Host      string
	Scopes    []scopeWords
	Since     when
	LastUsed  when
	RevokeURL string

	grants   []storage.Grant
	lastUsed time.Time
}

type connectionsData struct {
	chrome
	Apps  []connectedApp
	Pager pager
}

// connections serves GET /account/connections: the apps the signed-in
// person authorized at this site.
func (h *Handler) connections(w http.ResponseWriter, r *http.Request, rq *request) {
	apps, err := h.connectedApps(r, rq)
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	from, to, p := paginate(len(apps), r.URL.Query().Get("page"), connectionsPath, r.URL.Query())
	d := connectionsData{chrome: chromeFor(rq, "account", "account"), Apps: apps[from:to], Pager: p}
	h.render(w, r, rq, http.StatusOK, "account_connections", "Connected apps", d, h.takeFlash(r.Context(), rq))
}

// connectedApps groups the person's live grants by client, most recently
// used first.
func (h *Handler) connectedApps(r *http.Request, rq *request) ([]connectedApp, error) {
	// A person's grants at one site are few: all of them, then grouped.
	grants, _, err := h.store.LiveGrants(r.Context(), rq.site.ID, storage.GrantQuery{At: h.now(), UserID: rq.user.ID})
	if err != nil {
		return nil, err
	}
	n := h.namer(r.Context(), rq.site.ID)
	byClient := map[string]*connectedApp{}
	var order []string
	for _, g := range grants {
		a, ok := byClient[g.ClientID]
		if !ok {
			name, _ := n.client(g.ClientID)
			a = &connectedApp{Name: name, ClientID: g.ClientID, Host: clientHost(n, g.ClientID),
				RevokeURL: connectionsPath + "/revoke?client_id=" + url.QueryEscape(g.ClientID)}
			byClient[g.ClientID] = a
			order = append(order, g.ClientID)
		}
		a.grants = append(a.grants, g)
	}
	out := make([]connectedApp, 0, len(order))
	for _, id := range order {
		a := byClient[id]
		var scopes []string
		first := a.grants[0].CreatedAt
		for _, g := range a.grants {
			for _, s := range g.Scopes {
				if !slices.Contains(scopes, s) {
					scopes = append(scopes, s)
				}
			}
			first = minTime(first, g.CreatedAt)
			if t := grantLastUsed(g); t.After(a.lastUsed) {
				a.lastUsed = t
			}
		}
		a.Scopes = describeScopes(scopes)
		a.Since = h.when(first)
		a.LastUsed = h.when(a.lastUsed)
		out = append(out, *a)
	}
	slices.SortStableFunc(out, func(x, y connectedApp) int { return y.lastUsed.Compare(x.lastUsed) })
	return out, nil
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// clientHost is the host a person can recognise the client by: that of
// its first redirect URI, or of its metadata document URL.
func clientHost(n *names, clientID string) string {
	n.client(clientID)
	if c := n.clients[clientID]; c != nil && len(c.RedirectURIs) > 0 {
		if u, err := url.Parse(c.RedirectURIs[0]); err == nil {
			return u.Hostname()
		}
	}
	if u, err := url.Parse(clientID); err == nil && u.Scheme == "https" {
		return u.Hostname()
	}
	return ""
}

// connectionApp finds one of the person's connected apps by client ID.
func (h *Handler) connectionApp(r *http.Request, rq *request, clientID string) (*connectedApp, error) {
	apps, err := h.connectedApps(r, rq)
	if err != nil {
		return nil, err
	}
	for i := range apps {
		if apps[i].ClientID == clientID {
			return &apps[i], nil
		}
	}
	return nil, storage.ErrNotFound
}

// connectionRevokeConfirm serves GET /account/connections/revoke?client_id=.
func (h *Handler) connectionRevokeConfirm(w http.ResponseWriter, r *http.Request, rq *request) {
	a, err := h.connectionApp(r, rq, r.URL.Query().Get("client_id"))
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	h.renderConnectionRevokeConfirm(w, r, rq, a)
}

func (h *Handler) renderConnectionRevokeConfirm(w http.ResponseWriter, r *http.Request, rq *request, a *connectedApp) {
	d := confirmData{
		chrome:  chromeFor(rq, "account", "account"),
		Message: h.t(r, rq, "web.revoke.question", "Name", a.Name),
		Details: []string{
			h.t(r, rq, "web.revoke.loses", "Name", a.Name, "Site", rq.site.Name),
		},
		Action: connectionsPath + "/revoke", Hidden: []hiddenField{{"client_id", a.ClientID}},
		Button: "Revoke access", Danger: true, CancelURL: connectionsPath,
	}
	for _, s := range a.Scopes {
		d.List = append(d.List, h.t(r, rq, s.Key()))
	}
	d.After = []string{"You can connect it again later; it will ask for your permission again."}
	d.Narrow = true
	h.render(w, r, rq, http.StatusOK, "web_confirm", "Revoke access", d, nil)
}

// connectionRevoke serves POST /account/connections/revoke: every grant of
// the person to the client is revoked, and its tokens are refused at once
// at /member/graphql and /mcp.
func (h *Handler) connectionRevoke(w http.ResponseWriter, r *http.Request, rq *request) {
	a, err := h.connectionApp(r, rq, r.PostFormValue("client_id"))
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	if !confirmed(r) {
		h.renderConnectionRevokeConfirm(w, r, rq, a)
		return
	}
	if err := h.revokeGrants(r, rq, a.grants, "revoked by the member"); err != nil {
		h.fail(w, r, rq, err)
		return
	}
	_ = h.setFlash(r.Context(), rq, flash{Kind: "ok", Message: h.t(r, rq, "web.revoke.done", "Name", a.Name)})
	seeOther(w, r, connectionsPath)
}
