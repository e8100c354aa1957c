package web

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/lectern/lectern/authserver/clientmeta"
	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/i18n"
	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/vocab"
)

const appsPath = "/admin/developers/apps"

func appURL(clientID string) string { return appsPath + "/" + url.PathEscape(clientID) }

// appRow is an application in the list.
type appRow struct {
	Name, ClientID, URL string
	Type, Audience      string
	Scopes              []scopeWords
	Connections         int
	Created             when
}

type appListData struct {
	chrome
	Apps  []appRow
	Pager pager
}

// appList serves GET /admin/developers/apps: the site's applications
// (created here, with `lectern client create` or the admin API).
func (h *Handler) appList(w http.ResponseWriter, r *http.Request, rq *request) {
	ctx := r.Context()
	apps, err := h.platform.Applications(ctx, rq.site.ID)
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	perClient, err := h.store.LiveGrantCounts(ctx, rq.site.ID, h.now())
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	// Newest first: the one just created is on top.
	slices.SortStableFunc(apps, func(a, b storage.Client) int { return b.CreatedAt.Compare(a.CreatedAt) })
	from, to, p := paginate(len(apps), r.URL.Query().Get("page"), appsPath, r.URL.Query())
	d := appListData{chrome: chromeFor(rq, "admin", "apps"), Pager: p}
	for _, c := range apps[from:to] {
		d.Apps = append(d.Apps, appRow{
			Name: c.Name, ClientID: c.ClientID, URL: appURL(c.ClientID), Type: typeLabel(c.Type), Audience: c.Audience,
			Scopes: describeScopes(c.Scopes), Connections: perClient[c.ClientID], Created: h.when(c.CreatedAt),
		})
	}
	h.render(w, r, rq, http.StatusOK, "admin_apps", "OAuth applications", d, h.takeFlash(ctx, rq))
}

func typeLabel(t string) string {
	if t == storage.ClientConfidential {
		return "confidential"
	}
	return "public"
}

// appForm is what the application form holds.
type appForm struct {
	Name         string
	RedirectURIs string // one per line
	// Type is "public" or "confidential" (creation only).
	Type   string
	Scopes []string
	// ResourceServer: the application may introspect other applications'
	// access tokens (confidential applications only).
	ResourceServer bool
}

// fieldErrors are the form's errors, each shown next to its field.
type fieldErrors struct {
	Name, RedirectURIs, Scopes, Type, ResourceServer, Form string
}

func (e fieldErrors) Any() bool { return e != fieldErrors{} }

// set places a refusal of the platform next to the field it names.
func (e *fieldErrors) set(me *clientmeta.MetadataError) {
	msg := strings.TrimPrefix(me.Description, me.Field+": ")
	switch me.Field {
	case "client_name":
		e.Name = "The name " + msg + "."
	case "redirect_uris", "application_type":
		e.RedirectURIs = msg
	case "scope":
		e.Scopes = msg
	case "token_endpoint_auth_method":
		e.Type = msg
	case "resource_server":
		e.ResourceServer = msg
	default:
		e.Form = me.Description
	}
}

// scopeChoice is a checkbox of the form.
type scopeChoice struct {
	ID, Name, Description string
	Checked               bool
}

// Key is the message ID of the scope's wording.
func (c scopeChoice) Key() string { return "scope." + c.Name }

// scopeChoices lists what an application of audience may be given: the
// identity scopes and its audience's own.
func scopeChoices(audience string, checked []string) []scopeChoice {
	var out []scopeChoice
	for _, s := range scope.All() {
		if !scope.AllowedFor(audience, s.Name) {
			continue
		}
		out = append(out, scopeChoice{
			ID: "scope-" + strings.NewReplacer(":", "-", "_", "-").Replace(s.Name), Name: s.Name,
			Description: s.Description, Checked: slices.Contains(checked, s.Name),
		})
	}
	return out
}

// newAppScopes are checked on a new member application: enough to identify
// the member and read their account, nothing that changes it.
var newAppScopes = []string{scope.OpenID, scope.Profile, scope.Email, scope.AccountRead}

type appFormData struct {
	chrome
	Form    appForm
	Choices []scopeChoice
	Errors  fieldErrors
}

// appNew serves GET /admin/developers/apps/new.
func (h *Handler) appNew(w http.ResponseWriter, r *http.Request, rq *request) {
	d := appFormData{chrome: chromeFor(rq, "admin", "apps"), Form: appForm{Type: "public"},
		Choices: scopeChoices(storage.AudienceMember, newAppScopes)}
	h.render(w, r, rq, http.StatusOK, "admin_app_new", "New OAuth application", d, nil)
}

func readAppForm(r *http.Request) appForm {
	return appForm{
		Name: strings.TrimSpace(r.PostFormValue("name")), RedirectURIs: r.PostFormValue("redirect_uris"),
		Type: r.PostFormValue("type"), Scopes: r.PostForm["scope"],
		ResourceServer: r.PostFormValue("resource_server") == "yes",
	}
}

// lines splits the redirect URI box: one URI per line, blanks and repeats
// dropped. It never returns nil, so that an emptied box is an error rather
// than "unchanged".
func lines(s string) []string {
	out := []string{}
	for l := range strings.Lines(s) {
		if l = strings.TrimSpace(l); l != "" && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// appCreate serves POST /admin/developers/apps: a member application. Its
// client ID, and for a confidential one the secret, are shown once on the
// application's page.
func (h *Handler) appCreate(w http.ResponseWriter, r *http.Request, rq *request) {
	ctx := r.Context()
	f := readAppForm(r)
	var errs fieldErrors
	if f.Type != "public" && f.Type != "confidential" {
		errs.Type = "Choose whether the application can keep a secret."
	}
	spec := clientmeta.ClientSpec{
		Name: f.Name, RedirectURIs: lines(f.RedirectURIs), Scopes: f.Scopes,
		Audience: storage.AudienceMember, Confidential: f.Type == "confidential",
		Source: storage.SourceAdmin, Reviewed: true, CreatedBy: rq.user.ID, ResourceServer: f.ResourceServer,
	}
	var me *clientmeta.MetadataError
	if _, err := clientmeta.ValidateClient(spec); errors.As(err, &me) {
		// Checked here as well as on creation so that a missing type does
		// not hide what else is wrong.
		errs.set(me)
	}
	if len(f.Scopes) == 0 {
		errs.Scopes = "Choose at least one permission."
	}
	if !errs.Any() {
		c, secret, err := h.platform.CreateClient(ctx, rq.site.ID, spec)
		switch {
		case errors.As(err, &me):
			errs.set(me)
		case err != nil:
			h.fail(w, r, rq, err)
			return
		default:
			h.audit(r, rq, "client.created", c.ClientID, map[string]any{
				"name": c.Name, "audience": c.Audience, "type": c.Type, "scopes": c.Scopes, "redirect_uris": c.RedirectURIs,
				"resource_server": c.ResourceServer,
			})
			msg := h.t(r, rq, "web.app.created", "Name", c.Name)
			if secret != "" {
				msg = h.t(r, rq, "web.app.created_secret", "Name", c.Name)
			}
			if err := h.setFlash(ctx, rq, flash{Kind: "ok", Message: msg, Secret: secret, SecretFor: c.ClientID}); err != nil && secret != "" {
				// The secret could not be kept for the next page; show it
				// on this one rather than lose it.
				h.renderApp(w, r, rq, http.StatusCreated, c, &flash{Kind: "ok", Message: msg, Secret: secret, SecretFor: c.ClientID}, nil, nil)
				return
			}
			seeOther(w, r, appURL(c.ClientID))
			return
		}
	}
	d := appFormData{chrome: chromeFor(rq, "admin", "apps"), Form: f, Choices: scopeChoices(storage.AudienceMember, f.Scopes), Errors: errs}
	h.render(w, r, rq, http.StatusBadRequest, "admin_app_new", "New OAuth application", d, &flash{Kind: "error", Message: "The application was not created. Correct the fields marked below."})
}

// appView is one application's page.
type appView struct {
	Name, ClientID   string
	Type, Audience   string
	Confidential     bool
	ResourceServer   bool
	RedirectURIs     []string
	Scopes           []scopeWords
	Created, Updated when
	LastUsed         when
	CreatedBy        string
	Connections      int
	ConnectionsURL   string
	URL              string
	RotateURL        string
	DeleteURL        string
	// What a developer needs to connect.
	Issuer, AuthorizeURL, TokenURL, Resource, MetadataURL string
}

type appData struct {
	appFormData
	App appView
	// Secret is the new client secret, on the one page view after it was
	// made.
	Secret string
}

// appShow serves GET /admin/developers/apps/{id}: the application, its
// credentials, and the edit form.
func (h *Handler) appShow(w http.ResponseWriter, r *http.Request, rq *request) {
	c, err := h.platform.Application(r.Context(), rq.site.ID, r.PathValue("id"))
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	h.renderApp(w, r, rq, http.StatusOK, c, h.takeFlash(r.Context(), rq), nil, nil)
}

// renderApp shows application c; form and errs are a rejected edit.
func (h *Handler) renderApp(w http.ResponseWriter, r *http.Request, rq *request, status int, c *storage.Client, f *flash, form *appForm, errs *fieldErrors) {
	ctx := r.Context()
	n, err := h.clientGrantCount(r.Context(), rq, c.ClientID)
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	site := rq.site
	v := appView{
		Name: c.Name, ClientID: c.ClientID, Type: typeLabel(c.Type), Audience: c.Audience,
		Confidential: c.Type == storage.ClientConfidential, ResourceServer: c.ResourceServer,
		RedirectURIs: c.RedirectURIs, Scopes: describeScopes(c.Scopes),
		Created: h.when(c.CreatedAt), Updated: h.when(c.UpdatedAt), CreatedBy: c.CreatedBy, Connections: n,
		ConnectionsURL: grantsPath + "?client=" + url.QueryEscape(c.ClientID),
		URL:            appURL(c.ClientID), RotateURL: appURL(c.ClientID) + "/rotate-secret", DeleteURL: appURL(c.ClientID) + "/delete",
		Issuer: site.Issuer(), AuthorizeURL: site.URL(vocab.AuthorizePath), TokenURL: site.URL(vocab.TokenPath),
		Resource: site.Resource(), MetadataURL: site.URL(vocab.AuthorizationServerPath),
	}
	if c.LastUsedAt != nil {
		v.LastUsed = h.when(*c.LastUsedAt)
	} else {
		v.LastUsed = when{Text: "time.not_yet"}
	}
	if u, err := h.store.UserByID(ctx, c.CreatedBy); err == nil {
		v.CreatedBy = u.Email
	}
	d := appData{App: v}
	d.chrome = chromeFor(rq, "admin", "apps")
	if form != nil {
		d.Form, d.Errors = *form, *errs
		if !v.Confidential && d.Errors.ResourceServer != "" && d.Errors.Form == "" {
			// A public application's page has no resource-server field to
			// mark (only a crafted request sets it): the form says why.
			d.Errors.Form, d.Errors.ResourceServer = d.Errors.ResourceServer, ""
		}
	} else {
		d.Form = appForm{Name: c.Name, RedirectURIs: strings.Join(c.RedirectURIs, "\n"), ResourceServer: c.ResourceServer}
	}
	checked := c.Scopes
	if form != nil {
		checked = form.Scopes
	}
	d.Choices = scopeChoices(c.Audience, checked)
	if f != nil && f.Secret != "" && f.SecretFor == c.ClientID {
		d.Secret = f.Secret
	}
	h.render(w, r, rq, status, "admin_app", c.Name, d, f)
}

// appUpdate serves POST /admin/developers/apps/{id}: name, redirect URIs
// and scopes. Connections keep what members granted.
func (h *Handler) appUpdate(w http.ResponseWriter, r *http.Request, rq *request) {
	ctx := r.Context()
	id := r.PathValue("id")
	c, err := h.platform.Application(ctx, rq.site.ID, id)
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	f := readAppForm(r)
	var errs fieldErrors
	if len(f.Scopes) == 0 {
		errs.Scopes = "Choose at least one permission."
	} else {
		updated, err := h.platform.UpdateApplication(ctx, rq.site.ID, id, platform.ApplicationChange{
			Name: &f.Name, RedirectURIs: lines(f.RedirectURIs), Scopes: f.Scopes, ResourceServer: &f.ResourceServer,
		})
		var me *clientmeta.MetadataError
		switch {
		case errors.As(err, &me):
			errs.set(me)
		case err != nil:
			h.fail(w, r, rq, err)
			return
		default:
			h.audit(r, rq, "client.updated", id, map[string]any{
				"name": updated.Name, "scopes": updated.Scopes, "redirect_uris": updated.RedirectURIs,
				"resource_server": updated.ResourceServer,
			})
			_ = h.setFlash(ctx, rq, flash{Kind: "ok", Message: h.t(r, rq, "web.app.saved", "Name", updated.Name)})
			seeOther(w, r, appURL(id))
			return
		}
	}
	h.renderApp(w, r, rq, http.StatusBadRequest, c, &flash{Kind: "error", Message: "Your changes were not saved. Correct the fields marked below."}, &f, &errs)
}

// confirmData is a confirmation page: a destructive action happens only
// from its form (DESIGN: no state change without a second, explicit step).
type confirmData struct {
	chrome
	Message string
	// Details are paragraphs, List a bulleted list after them, After
	// paragraphs after that, and Facts a description list of the target.
	Details   []string
	List      []string
	After     []string
	Facts     []fact
	Action    string
	Hidden    []hiddenField
	Button    string
	Danger    bool
	CancelURL string
}

type fact struct{ Term, Value string }

type hiddenField struct{ Name, Value string }

// confirmed reports whether a POST came from a confirmation form.
func confirmed(r *http.Request) bool { return r.PostFormValue("confirm") == "yes" }

// appRotateConfirm serves GET /admin/developers/apps/{id}/rotate-secret.
func (h *Handler) appRotateConfirm(w http.ResponseWriter, r *http.Request, rq *request) {
	c, err := h.platform.Application(r.Context(), rq.site.ID, r.PathValue("id"))
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	h.renderRotateConfirm(w, r, rq, c)
}

func (h *Handler) renderRotateConfirm(w http.ResponseWriter, r *http.Request, rq *request, c *storage.Client) {
	if c.Type != storage.ClientConfidential {
		h.problem(w, r, rq, http.StatusBadRequest, "No secret to rotate", h.t(r, rq, "web.rotate.public", "Name", c.Name), "")
		return
	}
	d := confirmData{
		chrome:  chromeFor(rq, "admin", "apps"),
		Message: h.t(r, rq, "web.rotate.question", "Name", c.Name),
		Details: []string{
			"A new secret is made and shown once. The current secret stops working at once: the application cannot sign members in or refresh tokens until its developer installs the new one.",
			"Members' connections stay in place.",
		},
		Facts:  []fact{{"Application", c.Name}, {"Client ID", c.ClientID}},
		Action: appURL(c.ClientID) + "/rotate-secret", Button: "Rotate secret", Danger: true, CancelURL: appURL(c.ClientID),
	}
	d.Narrow = true
	h.render(w, r, rq, http.StatusOK, "web_confirm", "Rotate secret", d, nil)
}

// appRotate serves POST /admin/developers/apps/{id}/rotate-secret.
func (h *Handler) appRotate(w http.ResponseWriter, r *http.Request, rq *request) {
	ctx := r.Context()
	id := r.PathValue("id")
	c, err := h.platform.Application(ctx, rq.site.ID, id)
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	if !confirmed(r) || c.Type != storage.ClientConfidential {
		h.renderRotateConfirm(w, r, rq, c)
		return
	}
	secret, err := h.platform.RotateSecret(ctx, rq.site.ID, id)
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	h.audit(r, rq, "client.secret_rotated", id, map[string]any{"name": c.Name})
	f := flash{Kind: "ok", Message: h.t(r, rq, "web.rotate.done", "Name", c.Name), Secret: secret, SecretFor: id}
	if err := h.setFlash(ctx, rq, f); err != nil {
		h.renderApp(w, r, rq, http.StatusOK, c, &f, nil, nil)
		return
	}
	seeOther(w, r, appURL(id))
}

// appDeleteConfirm serves GET /admin/developers/apps/{id}/delete.
func (h *Handler) appDeleteConfirm(w http.ResponseWriter, r *http.Request, rq *request) {
	c, err := h.platform.Application(r.Context(), rq.site.ID, r.PathValue("id"))
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	h.renderDeleteConfirm(w, r, rq, c)
}

func (h *Handler) renderDeleteConfirm(w http.ResponseWriter, r *http.Request, rq *request, c *storage.Client) {
	n, err := h.clientGrantCount(r.Context(), rq, c.ClientID)
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	d := confirmData{
		chrome:  chromeFor(rq, "admin", "apps"),
		Message: h.t(r, rq, "web.delete.question", "Name", c.Name),
		Details: []string{
			"Its client ID stops working at once. No member has connected it.",
			"This cannot be undone. To offer the application again you would create a new one with a new client ID.",
		},
		Facts:  []fact{{"Application", c.Name}, {"Client ID", c.ClientID}, {"Connections to revoke", strconv.Itoa(n)}},
		Action: appURL(c.ClientID) + "/delete", Button: "Delete application", Danger: true, CancelURL: appURL(c.ClientID),
	}
	if n > 0 {
		d.Details[0] = i18n.TN(lang(r, rq), "web.delete.with_connections", n)
	}
	d.Narrow = true
	h.render(w, r, rq, http.StatusOK, "web_confirm", "Delete application", d, nil)
}

// appDelete serves POST /admin/developers/apps/{id}/delete: it revokes the
// application's grants (their tokens stop at once) and deletes it.
func (h *Handler) appDelete(w http.ResponseWriter, r *http.Request, rq *request) {
	ctx := r.Context()
	id := r.PathValue("id")
	c, err := h.platform.Application(ctx, rq.site.ID, id)
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	if !confirmed(r) {
		h.renderDeleteConfirm(w, r, rq, c)
		return
	}
	n, err := h.platform.DeleteApplication(ctx, rq.site.ID, id, h.revoker, h.now())
	if err != nil {
		if n > 0 {
			h.audit(r, rq, "client.grants_revoked", id, map[string]any{"name": c.Name, "grants_revoked": n, "reason": "application deletion failed part-way"})
		}
		h.fail(w, r, rq, err)
		return
	}
	h.audit(r, rq, "client.deleted", id, map[string]any{"name": c.Name, "grants_revoked": n})
	_ = h.setFlash(ctx, rq, flash{Kind: "ok", Message: i18n.TN(lang(r, rq), "web.delete.done", n, "Name", c.Name)})
	seeOther(w, r, appsPath)
}
