package authserver

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/lectern/lectern/authserver/clientmeta"
	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/i18n"
	"github.com/lectern/lectern/session"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/ui"
)

// challengeRE: an S256 challenge is the base64url SHA-256 of the verifier,
// 43 characters (RFC 7636 §4.2).
var challengeRE = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// singleParams may appear at most once (RFC 6749 §3.1).
var singleParams = []string{"response_type", "client_id", "redirect_uri", "scope", "state",
	"code_challenge", "code_challenge_method", "nonce", "resource", "prompt", "response_mode", "max_age"}

// maxAuthorizeBody bounds a POSTed authorization request: as much as a GET
// can carry in its headers.
const maxAuthorizeBody = 64 << 10

// Authorize implements the authorization endpoint (RFC 6749 §4.1.1, RFC
// 7636, RFC 8707, RFC 9207, OpenID Connect Core §3.1.2.1) for GET and
// POST /oauth/authorize.
//
// Errors about the client or its redirect URI are shown on an error page and
// never redirected: the redirect target cannot be trusted. Every other error
// is redirected to the client with error, error_description, state and iss.
func (s *Server) Authorize(w http.ResponseWriter, r *http.Request) {
	site := siteOf(r.Context())
	q, problem := authorizeParams(w, r)
	if problem != "" {
		status := http.StatusBadRequest
		if r.Method != http.MethodGet && r.Method != http.MethodPost {
			w.Header().Set("Allow", "GET, POST")
			status = http.StatusMethodNotAllowed
		}
		s.errorPage(w, r, site, status, codeInvalidRequest, problem, "")
		return
	}
	for _, p := range []string{"client_id", "redirect_uri"} {
		if len(q[p]) > 1 {
			s.errorPage(w, r, site, http.StatusBadRequest, codeInvalidRequest, i18n.T(i18n.Resolve(r, site.Locale), "authorize.repeated", "Param", p), "")
			return
		}
	}
	clientID := q.Get("client_id")
	if clientID == "" {
		s.errorPage(w, r, site, http.StatusBadRequest, codeInvalidRequest, "The request names no application (client_id is missing).", "")
		return
	}
	// A client_id that is a metadata document's URL, not already cached,
	// makes the server fetch it: that is charged to the anonymous limits
	// before the fetch, as storing the request would be (audit of issue
	// 14, finding 3), and the request is not charged again for storing.
	var admitted bool
	client, err := s.clientAdmitted(r.Context(), site, clientID, func(ctx context.Context) error {
		ok, retry, err := s.chargeAnonymous(ctx, r, site)
		switch {
		case err != nil:
			return err
		case !ok:
			return &busyError{retry: retry}
		}
		admitted = true
		return nil
	})
	if err != nil {
		var busy *busyError
		if errors.As(err, &busy) {
			s.busyPage(w, r, site, busy.retry, busyStarting)
			return
		}
		if errors.Is(err, storage.ErrNotFound) {
			s.errorPage(w, r, site, http.StatusBadRequest, codeInvalidClient, i18n.T(i18n.Resolve(r, site.Locale), "authorize.unknown_client", "Site", site.Name), "")
			return
		}
		var ce *ClientError
		if errors.As(err, &ce) {
			s.errorPage(w, r, site, http.StatusBadRequest, codeInvalidClient, "The application's client metadata document could not be used.", ce.Description)
			return
		}
		s.unavailablePage(w, r, site, err)
		return
	}
	redirectURI := q.Get("redirect_uri")
	if redirectURI == "" {
		s.errorPage(w, r, site, http.StatusBadRequest, codeInvalidRequest, "The request has no redirect_uri.", "")
		return
	}
	if !clientmeta.MatchRedirectURI(client.RedirectURIs(), redirectURI) {
		s.errorPage(w, r, site, http.StatusBadRequest, codeInvalidRequest, i18n.T(i18n.Resolve(r, site.Locale), "authorize.unknown_redirect", "Client", client.Name), "")
		return
	}
	// From here the client and its redirect URI are trusted: errors go back.
	state := q.Get("state")
	fail := func(e *Error) { s.redirectError(w, r, site, redirectURI, state, e) }
	for _, p := range singleParams {
		if len(q[p]) > 1 {
			if p == "resource" {
				fail(oauthError(codeInvalidTarget, "more than one resource was requested; this server has one resource, "+site.Resource()))
				return
			}
			fail(oauthError(codeInvalidRequest, "the "+p+" parameter is repeated"))
			return
		}
	}
	if q.Has("request") || q.Has("request_uri") {
		fail(oauthError(codeRequestNotSupported, "request objects are not supported"))
		return
	}
	switch rt := q.Get("response_type"); {
	case rt == "":
		fail(oauthError(codeInvalidRequest, "response_type is required; use code"))
		return
	case rt != "code":
		fail(oauthError(codeUnsupportedResponseType, "only response_type=code is supported"))
		return
	}
	if q.Has("response_mode") && q.Get("response_mode") != "query" {
		fail(oauthError(codeInvalidRequest, "only response_mode=query is supported"))
		return
	}
	if state == "" {
		fail(oauthError(codeInvalidRequest, "state is required"))
		return
	}
	if len(state) > maxStateBytes || len(q.Get("nonce")) > maxStateBytes {
		echo := state
		if len(state) > maxStateBytes {
			echo = "" // what was wrong is not sent back whole
		}
		s.redirectError(w, r, site, redirectURI, echo, oauthError(codeInvalidRequest,
			"state and nonce may have at most "+strconv.Itoa(maxStateBytes)+" bytes each"))
		return
	}
	challenge, method := q.Get("code_challenge"), q.Get("code_challenge_method")
	switch {
	case challenge == "":
		fail(oauthError(codeInvalidRequest, "code_challenge is required (PKCE with S256)"))
		return
	case method == "":
		fail(oauthError(codeInvalidRequest, "code_challenge_method is required and must be S256"))
		return
	case method != "S256":
		fail(oauthError(codeInvalidRequest, "code_challenge_method must be S256; "+method+" is not supported"))
		return
	case !challengeRE.MatchString(challenge):
		fail(oauthError(codeInvalidRequest, "code_challenge must be the 43-character base64url SHA-256 of the code verifier"))
		return
	}
	scopes := scope.Parse(q.Get("scope"))
	if len(scopes) == 0 {
		fail(oauthError(codeInvalidScope, "scope is required"))
		return
	}
	if desc := s.checkScopes(client, scopes); desc != "" {
		fail(oauthError(codeInvalidScope, desc))
		return
	}
	resource := q.Get("resource")
	switch {
	case resource == "" && client.Audience == storage.AudienceMember:
		fail(oauthError(codeInvalidTarget, "resource is required for member clients; use "+site.Resource()))
		return
	case resource != "" && !resourceMatches(site, resource):
		fail(oauthError(codeInvalidTarget, "resource must be this site's protected resource, "+site.Resource()))
		return
	}
	prompt, desc := parsePrompt(q.Get("prompt"))
	if desc != "" {
		fail(oauthError(codeInvalidRequest, desc))
		return
	}
	maxAge, desc := parseMaxAge(q.Get("max_age"), q.Has("max_age"))
	if desc != "" {
		fail(oauthError(codeInvalidRequest, desc))
		return
	}
	nonce := q.Get("nonce")
	ar := &authRequest{
		ClientID: client.ClientID, RedirectURI: redirectURI, Scopes: scopes, State: state, Nonce: nonce,
		Challenge: challenge, Resource: site.Resource(), Prompt: prompt.pending(),
	}
	// One cache round trip: the session, and the user's profile and consent
	// for this client.
	sess, cached, err := s.sessions.GetWith(r, site, func(userID string) []string {
		return []string{storage.ProfileKey(site.ID, userID), consentKey(site.ID, userID, client.ClientID)}
	})
	if err != nil {
		s.unavailablePage(w, r, site, err)
		return
	}
	// A new sign-in is due for prompt=login and max_age=0 whatever the
	// session's age, and for a session authenticated before max_age
	// allows (§3.1.2.1: "MUST attempt to actively re-authenticate").
	reauth := sess != nil && (prompt.login || maxAge == 0 || tooOld(sess, maxAge, s.now()))
	if reauth {
		ar.StaleAuth = staleAuth(sess)
	}
	if sess == nil || reauth {
		if prompt.none {
			desc := "the user is not signed in"
			if reauth {
				desc = "the user signed in more than max_age seconds ago"
			}
			fail(oauthError(codeLoginRequired, desc))
			return
		}
		var userID string
		if sess != nil {
			userID = sess.UserID
		} else if !admitted && !s.admitAnonymous(w, r, site) {
			return
		}
		if !s.holdPending(w, r, site, ar, userID) {
			return
		}
		http.Redirect(w, r, "/login?auth_request="+ar.ID, http.StatusFound)
		return
	}
	s.proceed(w, r, site, client, ar, sess, cached)
}

// checkScopes returns why scopes cannot be requested by client, or "".
func (s *Server) checkScopes(client *Client, scopes []string) string {
	var operator, member bool
	for _, name := range scopes {
		sc, ok := scope.Lookup(name)
		if !ok {
			return "unknown scope " + quoteScope(name)
		}
		switch sc.Audience {
		case scope.AudienceOperator:
			operator = true
		case scope.AudienceMember:
			member = true
		}
		if sc.Audience != "" && sc.Audience != client.Audience {
			if sc.Audience == scope.AudienceMember {
				return name + " is reserved to member clients; this is an operator client"
			}
			return name + " is an operator scope; member clients may request " + strings.Join(scope.MemberDefault(), " ")
		}
		if !client.AllowsScope(name) {
			return name + " is not among the scopes registered for this client"
		}
		if client.Source == storage.SourceCIMD && !client.Reviewed && !scope.IsRead(name) {
			return name + " is not available to an unreviewed client (Client ID Metadata Document from " + client.DocumentHost + "); unreviewed clients may request identity and *:read scopes only"
		}
	}
	if operator && member {
		return "operator and member scopes cannot be requested together"
	}
	return ""
}

// authorizeParams reads the authorization request's parameters: from the
// query of a GET, or from the form-encoded body of a POST (OpenID Connect
// Core §3.1.2.1: "MUST support the use of the HTTP GET and POST methods").
// A POST with a query is refused rather than merged, so that no two
// readers of one request can see different parameters. problem is the
// error page's message.
func authorizeParams(w http.ResponseWriter, r *http.Request) (q url.Values, problem string) {
	switch r.Method {
	case http.MethodGet:
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			return nil, "The request's query string is malformed."
		}
		return q, ""
	case http.MethodPost:
		if r.URL.RawQuery != "" {
			return nil, "A POSTed authorization request carries its parameters in the body, not in the URL."
		}
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/x-www-form-urlencoded" {
			return nil, "A POSTed authorization request must be form-encoded (application/x-www-form-urlencoded)."
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxAuthorizeBody))
		if err != nil {
			return nil, "The request's form could not be read."
		}
		q, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, "The request's form is malformed."
		}
		return q, ""
	}
	return nil, "The authorization endpoint takes GET and POST requests."
}

func quoteScope(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return `"` + s + `"`
}

// proceed continues an authorization for a signed-in person: role checks,
// then remembered consent or the consent page, then the code.
// cached are the profile and consent values already read with the session
// (nil entries when not).
func (s *Server) proceed(w http.ResponseWriter, r *http.Request, site *tenant.Site, client *Client, ar *authRequest, sess *session.Session, cached [][]byte) {
	ctx := r.Context()
	if !continues(sess, ar) {
		// A step after the authorization request (continue, a sign-in of
		// another kind) with the session the request asked to replace.
		s.signInAgain(w, r, site, ar, sess)
		return
	}
	p, remembered, err := s.userAndConsent(ctx, site.ID, sess.UserID, client.ClientID, cached)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) { // the user was deleted
			_ = s.sessions.Destroy(w, r, site)
			s.redirectError(w, r, site, ar.RedirectURI, ar.State, oauthError(codeAccessDenied, "the user no longer exists"))
			return
		}
		s.unavailablePage(w, r, site, err)
		return
	}
	granted, _ := grantable(p.Roles, client.Audience, ar.Scopes)
	if granted == nil {
		s.audit(ctx, site.ID, sess.UserID, "authorization.refused", client.ClientID, r, map[string]any{"scopes": ar.Scopes, "roles": p.Roles})
		if ar.Prompt == "none" { // no page may be shown (§3.1.2.1)
			s.redirectError(w, r, site, ar.RedirectURI, ar.State, oauthError(codeAccessDenied, "the user has no role that allows this authorization"))
			return
		}
		s.refusal(w, r, site, client, ar, p, sess)
		return
	}
	if s.factorDue(w, r, site, client, ar, sess, p) {
		return
	}
	if ar.Prompt != "consent" && covers(remembered, granted) {
		s.complete(w, r, site, client, ar, sess, p, granted)
		return
	}
	if ar.Prompt == "none" {
		s.redirectError(w, r, site, ar.RedirectURI, ar.State, oauthError(codeConsentRequired, "the user has not consented to these scopes"))
		return
	}
	if !s.holdPending(w, r, site, ar, sess.UserID) {
		return
	}
	http.Redirect(w, r, "/consent?auth_request="+ar.ID, http.StatusFound)
}

// signInAgain answers a request that the session it was refused came
// back to (authRequest.StaleAuth): login_required without interaction,
// else the sign-in form for the request.
func (s *Server) signInAgain(w http.ResponseWriter, r *http.Request, site *tenant.Site, ar *authRequest, sess *session.Session) {
	if ar.Prompt == "none" { // Authorize answers these itself; kept for safety
		s.redirectError(w, r, site, ar.RedirectURI, ar.State, oauthError(codeLoginRequired, "the user must sign in again"))
		return
	}
	if !s.holdPending(w, r, site, ar, sess.UserID) {
		return
	}
	http.Redirect(w, r, "/login?auth_request="+ar.ID, http.StatusFound)
}

// grantable splits requested scopes into those the person's roles may grant
// and those they may not (DESIGN §5). It returns nil granted when the person
// may grant nothing that was asked for beyond identity: no role at the site,
// or no grantable operator scope for an operator client.
func grantable(roles []string, audience string, requested []string) (granted, withheld []string) {
	if len(roles) == 0 {
		return nil, requested
	}
	var beyondIdentity bool
	for _, name := range requested {
		if !scope.IsIdentity(name) {
			beyondIdentity = true
		}
		if scope.IsIdentity(name) || scope.RoleMayGrant(roles, audience, name) {
			granted = append(granted, name)
			continue
		}
		withheld = append(withheld, name)
	}
	if beyondIdentity && !slices.ContainsFunc(granted, func(n string) bool { return !scope.IsIdentity(n) }) {
		return nil, requested
	}
	if audience == storage.AudienceOperator && !slices.ContainsFunc(roles, storage.IsOperatorRole) {
		return nil, requested
	}
	return granted, withheld
}

// factorDue applies the site's "staff must use a second factor"
// (staff_mfa) to an authorization of an operator client by the person of
// sess, who has profile p. When a second factor is due it answers
// (interaction_required without interaction, else the second-factor step
// or enrolment, which come back to the request) and returns true. Every
// way to a code passes it: proceed before remembered consent or the
// consent page, the consent page (GET and approve), and complete itself.
func (s *Server) factorDue(w http.ResponseWriter, r *http.Request, site *tenant.Site, client *Client, ar *authRequest, sess *session.Session, p *Profile) bool {
	if client.Audience != storage.AudienceOperator || !staffNeedsFactor(site, p.Roles, sess) {
		return false
	}
	if ar.Prompt == "none" {
		s.redirectError(w, r, site, ar.RedirectURI, ar.State, oauthError(codeInteractionRequired, "the site requires a second factor for operator access"))
		return true
	}
	s.requireFactor(w, r, site, ar, sess)
	return true
}

// complete issues the code and sends the browser back to the client,
// unless the staff policy wants a second factor first (factorDue: the
// last check, whichever page led here).
func (s *Server) complete(w http.ResponseWriter, r *http.Request, site *tenant.Site, client *Client, ar *authRequest, sess *session.Session, p *Profile, granted []string) {
	if s.factorDue(w, r, site, client, ar, sess, p) {
		return
	}
	code, err := s.issueCode(r.Context(), site.ID, &codeRecord{
		ClientID: ar.ClientID, RedirectURI: ar.RedirectURI, Challenge: ar.Challenge, Resource: ar.Resource,
		Scopes: granted, Nonce: ar.Nonce, UserID: sess.UserID, AuthTime: sess.AuthTime.Unix(), AMR: sess.AMR, Profile: *p,
	})
	if err != nil {
		s.unavailablePage(w, r, site, err)
		return
	}
	redirectToClient(w, responseURL(ar.RedirectURI, url.Values{"code": {code}, "state": {ar.State}, "iss": {site.Issuer()}}))
}

// redirectToClient sends the browser to location, a registered redirect
// URI with the response's parameters, with a bare 302: unlike
// http.Redirect, no HTML note with the URI escaped in it (RFC 9110 §15.4.3
// has it as usual, not required; a browser follows the Location and a
// client reads it), which is cheaper to send on the busiest page.
func redirectToClient(w http.ResponseWriter, location string) {
	w.Header().Set("Location", location)
	w.WriteHeader(http.StatusFound)
}

// responseURL adds params to a redirect URI's query (RFC 6749 §4.1.2: the
// URI's own query is retained), leaving out those with an empty value.
func responseURL(redirectURI string, params url.Values) string {
	if !strings.ContainsAny(redirectURI, "?#") {
		// The usual redirect URI, without a query: nothing to merge, so
		// no parsing (a registered URI is already valid).
		q := make(url.Values, len(params))
		for k, vs := range params {
			if len(vs) != 1 || vs[0] != "" {
				q[k] = vs
			}
		}
		if enc := q.Encode(); enc != "" {
			return redirectURI + "?" + enc
		}
		return redirectURI
	}
	u, err := url.Parse(redirectURI)
	if err != nil {
		return redirectURI // validated at registration; cannot happen
	}
	q := u.Query()
	for k, vs := range params {
		if len(vs) == 1 && vs[0] == "" {
			continue
		}
		q[k] = vs
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// redirectError sends an authorization error to the client (RFC 6749
// §4.1.2.1) with iss (RFC 9207).
func (s *Server) redirectError(w http.ResponseWriter, r *http.Request, site *tenant.Site, redirectURI, state string, e *Error) {
	s.logger.InfoContext(r.Context(), "authorization error", "error", e.code.String(), "description", e.description)
	redirectToClient(w, responseURL(redirectURI, url.Values{
		"error": {e.code.String()}, "error_description": {descriptionText(e.description)}, "state": {state}, "iss": {site.Issuer()},
	}))
}

// descriptionText keeps an error_description within the characters RFC
// 6749 §4.1.2.1 allows (printable ASCII but '"' and '\'), since it can
// quote what the request sent (NUL, line breaks, other bytes): '"' becomes
// '\”, '\' '/', anything else outside the set '?'. At most 300 bytes.
func descriptionText(s string) string {
	b := []byte(s)
	if len(b) > 300 {
		b = append(b[:297], "..."...)
	}
	for i, c := range b {
		switch {
		case c == '"':
			b[i] = '\''
		case c == '\\':
			b[i] = '/'
		case c < 0x20 || c > 0x7e:
			b[i] = '?'
		}
	}
	return string(b)
}

// errorPage shows an error to the person; nothing goes to the client.
// The status is the page's (405 for a wrong method, 403 for an expired
// form), not the code's: nothing here is an RFC 6749 JSON answer.
func (s *Server) errorPage(w http.ResponseWriter, r *http.Request, site *tenant.Site, status int, code errorCode, message, detail string) {
	s.ui.Render(w, r, status, "error", ui.Page{
		Title: "error.title", SiteName: site.Name,
		Data: map[string]string{"Message": message, "Detail": detail, "Code": code.String()},
	})
}

func (s *Server) unavailablePage(w http.ResponseWriter, r *http.Request, site *tenant.Site, err error) {
	s.logger.ErrorContext(r.Context(), "authorization unavailable", "err", err)
	w.Header().Set("Retry-After", "5")
	s.errorPage(w, r, site, http.StatusServiceUnavailable, codeTemporarilyUnavailable,
		"The sign-in service is temporarily unavailable.", "Please try again in a moment.")
}

// refusal tells a person without a suitable role that they cannot
// authorize the client; the link returns access_denied to the client.
// "Sign in as someone else" signs out and returns to the sign-in form of
// the same request, which is held for it (as for the consent page).
func (s *Server) refusal(w http.ResponseWriter, r *http.Request, site *tenant.Site, client *Client, ar *authRequest, p *Profile, sess *session.Session) {
	if ar.ID == "" && !s.holdPending(w, r, site, ar, sess.UserID) {
		return
	}
	lang := i18n.Resolve(r, site.Locale)
	detail := i18n.T(lang, "refusal.no_role", "Site", site.Name)
	if client.Audience == storage.AudienceOperator && len(p.Roles) > 0 {
		detail = i18n.T(lang, "refusal.operator_role", "Site", site.Name)
	}
	s.ui.Render(w, r, http.StatusForbidden, "refusal", ui.Page{
		Title: "refusal.title", SiteName: site.Name,
		Data: map[string]string{
			"Message": i18n.T(lang, "refusal.message", "Email", p.Email, "Client", client.Name, "Site", site.Name), "Detail": detail,
			"ClientName": client.Name, "UserEmail": p.Email,
			"ReturnURL": responseURL(ar.RedirectURI, url.Values{"error": {codeAccessDenied.String()},
				"error_description": {"the user has no role that allows this authorization"}, "state": {ar.State}, "iss": {site.Issuer()}}),
			"LogoutReturn": ar.signInPath(),
		},
	})
}
