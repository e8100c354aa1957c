package authserver

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"

	json "github.com/segmentio/encoding/json"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/session"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/ui"
)

// consentData is what the consent page shows (DESIGN §9): the client's name,
// the scopes in plain words, the redirect host, and a warning for
// unreviewed clients.
type consentData struct {
	Request      string
	ClientName   string
	UserEmail    string
	Scopes       []scope.Scope
	Withheld     []string
	RedirectHost string
	DocumentHost string
	Unreviewed   bool
	// LogoutReturn is where "Not you?" returns after signing out: the
	// sign-in form of this request, a local path the template escapes
	// (once) into the link's query.
	LogoutReturn string
}

// Consent serves the consent page (GET) and records the decision (POST).
func (s *Server) Consent(w http.ResponseWriter, r *http.Request) {
	site := siteOf(r.Context())
	ctx := r.Context()
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		s.errorPage(w, r, site, http.StatusMethodNotAllowed, codeInvalidRequest, "This page takes GET and POST requests.", "")
		return
	}
	id := r.URL.Query().Get("auth_request")
	if r.Method == http.MethodPost {
		if !s.parsePageForm(w, r, site) {
			return
		}
		id = r.PostFormValue("auth_request")
	}
	ar, err := s.pending(ctx, site.ID, id)
	if err != nil {
		s.unavailablePage(w, r, site, err)
		return
	}
	if ar == nil {
		s.expiredPage(w, r, site)
		return
	}
	sess, err := s.sessions.Get(r, site)
	if err != nil {
		s.unavailablePage(w, r, site, err)
		return
	}
	if sess == nil || !continues(sess, ar) {
		// Also a session the request asked to replace (prompt=login,
		// max_age): consent is no way around the sign-in.
		http.Redirect(w, r, ar.signInPath(), http.StatusFound)
		return
	}
	client, err := s.client(ctx, site, ar.ClientID)
	if err != nil {
		s.errorPage(w, r, site, http.StatusBadRequest, codeInvalidClient, "The application is no longer registered.", "")
		return
	}
	p, err := s.profile(ctx, site.ID, sess.UserID)
	if err != nil {
		s.unavailablePage(w, r, site, err)
		return
	}
	granted, withheld := grantable(p.Roles, client.Audience, ar.Scopes)
	if granted == nil {
		s.refusal(w, r, site, client, ar, p, sess)
		return
	}
	// The consent page is no way around the staff policy either: it can
	// be opened directly, skipping the enrolment proceed sent the person
	// to (audit P, finding 1).
	if r.Method == http.MethodGet {
		if s.factorDue(w, r, site, client, ar, sess, p) {
			return
		}
		s.renderConsent(w, r, site, client, ar, sess, p, granted, withheld)
		return
	}
	if !session.CheckCSRF(r, site, sess) {
		s.errorPage(w, r, site, http.StatusForbidden, codeInvalidRequest, "This consent form expired or did not come from this site.", "Go back to the application and start again.")
		return
	}
	decision := r.PostFormValue("decision")
	if decision != "approve" && decision != "deny" {
		// Nothing was decided: the request stays pending, so the form can
		// be sent again.
		s.errorPage(w, r, site, http.StatusBadRequest, codeInvalidRequest, "The consent form was submitted without a decision.", "Go back and choose Allow or Deny.")
		return
	}
	// A denial issues nothing; an approval needs what proceed asks first.
	if decision == "approve" && s.factorDue(w, r, site, client, ar, sess, p) {
		return
	}
	// One decision per request: the pending request is gone after this.
	_ = s.cache.Delete(ctx, storage.CacheKey(site.ID, "authreq", ar.ID))
	switch decision {
	case "approve":
		if err := s.rememberConsent(ctx, site.ID, sess.UserID, client.ClientID, granted); err != nil {
			s.unavailablePage(w, r, site, err)
			return
		}
		s.audit(ctx, site.ID, sess.UserID, "consent.granted", client.ClientID, r, map[string]any{"scopes": granted})
		s.complete(w, r, site, client, ar, sess, p, granted)
	case "deny":
		s.audit(ctx, site.ID, sess.UserID, "consent.denied", client.ClientID, r, map[string]any{"scopes": ar.Scopes})
		s.redirectError(w, r, site, ar.RedirectURI, ar.State, oauthError(codeAccessDenied, "the user denied the request"))
	}
}

func (s *Server) renderConsent(w http.ResponseWriter, r *http.Request, site *tenant.Site, client *Client, ar *authRequest, sess *session.Session, p *Profile, granted, withheld []string) {
	d := consentData{
		Request: ar.ID, ClientName: client.Name, UserEmail: p.Email, Withheld: withheld,
		DocumentHost: client.DocumentHost, Unreviewed: !client.Reviewed,
		LogoutReturn: ar.signInPath(),
	}
	if u, err := url.Parse(ar.RedirectURI); err == nil {
		d.RedirectHost = u.Host
	}
	for _, name := range granted {
		sc, _ := scope.Lookup(name)
		d.Scopes = append(d.Scopes, sc)
	}
	s.ui.Render(w, r, http.StatusOK, "consent", ui.Page{
		Title: "consent.title", TitleArgs: []any{"Client", client.Name}, SiteName: site.Name, CSRF: session.CSRFToken(w, r, site, sess), Data: d,
	})
}

// userAndConsent returns the user's profile at site and the scopes they
// approved for the client (remembered consent, DESIGN §3): from cached (the
// values read with the session) or the cache, else from the database.
func (s *Server) userAndConsent(ctx context.Context, site tenant.ID, userID, clientID string, cached [][]byte) (*Profile, []string, error) {
	cKey := consentKey(site, userID, clientID)
	vals := cached
	var err error
	if len(vals) != 2 {
		if vals, err = s.cache.GetMulti(ctx, storage.ProfileKey(site, userID), cKey); err != nil {
			return nil, nil, err
		}
	}
	var p *Profile
	if vals[0] != nil {
		var fromCache Profile
		if json.Unmarshal(vals[0], &fromCache) == nil && fromCache.UserID == userID {
			p = &fromCache
		}
	}
	if p == nil {
		if p, err = s.profile(ctx, site, userID); err != nil {
			return nil, nil, err
		}
	}
	var remembered []string
	if vals[1] != nil && json.Unmarshal(vals[1], &remembered) == nil {
		return p, remembered, nil
	}
	c, err := s.store.Consent(ctx, site, userID, clientID)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		remembered = []string{}
	case err != nil:
		return nil, nil, err
	default:
		remembered = c.Scopes
	}
	if b, err := json.Marshal(remembered); err == nil {
		_ = s.cache.Set(ctx, cKey, b, consentTTL)
	}
	return p, remembered, nil
}

func consentKey(site tenant.ID, userID, clientID string) string {
	return storage.ConsentKey(site, userID, clientID)
}

// covers reports whether every scope was approved.
func covers(remembered, scopes []string) bool {
	for _, sc := range scopes {
		if !slices.Contains(remembered, sc) {
			return false
		}
	}
	return true
}

// rememberConsent adds scopes to what the user approved for the client.
func (s *Server) rememberConsent(ctx context.Context, site tenant.ID, userID, clientID string, scopes []string) error {
	all := slices.Clone(scopes)
	if c, err := s.store.Consent(ctx, site, userID, clientID); err == nil {
		for _, sc := range c.Scopes {
			if !slices.Contains(all, sc) {
				all = append(all, sc)
			}
		}
	} else if !errors.Is(err, storage.ErrNotFound) {
		return err
	}
	if err := s.store.SaveConsent(ctx, &storage.Consent{SiteID: site, UserID: userID, ClientID: clientID, Scopes: all}); err != nil {
		return err
	}
	return s.cache.Delete(ctx, consentKey(site, userID, clientID))
}
