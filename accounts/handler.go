package accounts

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/lectern/lectern/authserver/throttle"
	"github.com/lectern/lectern/i18n"
	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/mfa"
	"github.com/lectern/lectern/session"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/ui"
)

//go:embed templates/*.html
var templateFS embed.FS

// Store is what the pages read directly.
type Store interface {
	SiteByID(ctx context.Context, id tenant.ID) (*storage.Site, error)
	UserByID(ctx context.Context, id string) (*storage.User, error)
	UserByEmail(ctx context.Context, email string) (*storage.User, error)
	RolesAt(ctx context.Context, site tenant.ID, userID string) ([]string, error)
	RecordAudit(ctx context.Context, e *storage.AuditEvent) error
	// A person with a second factor is not signed in by a link and a
	// password alone (signInAndGo).
	storage.FactorStore
}

// Options configures New; every field but Now and FormLimit is required.
type Options struct {
	Store    Store
	Cache    storage.Cache
	Platform *platform.Platform
	Sessions *session.Store
	// Revoker revokes grants at once (the bearer verifier): a password
	// reset revokes every grant of the account.
	Revoker platform.Revoker
	Logger  *slog.Logger
	Now     func() time.Time
	// FormLimit bounds how often one client IP may send each form
	// (default 20 an hour), platform-wide.
	FormLimit storage.Limit
	// Brand dresses the pages in the site's appearance. Nil: the shared
	// look.
	Brand ui.BrandSource
	// Throttle is the sign-in throttle the password of an invitation
	// accepted by signing in goes through: the authorization server's
	// (its Throttle), so failures count with the sign-in form's and
	// checks share its password gate. Nil: one over Cache with the
	// default limits and a gate of its own (failures still count
	// together: the counters are in Cache).
	Throttle *throttle.Throttle
}

// Handler serves the account pages.
type Handler struct {
	store    Store
	cache    storage.Cache
	platform *platform.Platform
	sessions *session.Store
	revoker  platform.Revoker
	logger   *slog.Logger
	now      func() time.Time
	limit    storage.Limit
	ui       *ui.Renderer
	mux      *http.ServeMux
	// work bounds the account work that runs after a form has answered.
	work     chan struct{}
	throttle *throttle.Throttle
}

var _ http.Handler = (*Handler)(nil)

// Paths this handler serves.
var Paths = []string{"/invitations/accept", "/signup", "/signup/verify", "/password/forgot", "/password/reset", "/email/confirm"}

// New returns the handler.
func New(o Options) (*Handler, error) {
	if o.Store == nil || o.Cache == nil || o.Platform == nil || o.Sessions == nil || o.Revoker == nil || o.Logger == nil {
		return nil, errors.New("accounts: Store, Cache, Platform, Sessions, Revoker and Logger are required")
	}
	r, err := ui.NewRenderer(o.Logger, templateFS)
	if err != nil {
		return nil, err
	}
	if o.Brand != nil {
		r.WithBrand(o.Brand)
	}
	h := &Handler{store: o.Store, cache: o.Cache, platform: o.Platform, sessions: o.Sessions, revoker: o.Revoker,
		logger: o.Logger, now: o.Now, limit: o.FormLimit, ui: r, mux: http.NewServeMux(), work: make(chan struct{}, 8), throttle: o.Throttle}
	if h.now == nil {
		h.now = time.Now
	}
	if h.throttle == nil {
		h.throttle = throttle.New(throttle.Options{Cache: o.Cache, Now: h.now, Logger: o.Logger})
	}
	if h.limit.Rate == 0 {
		h.limit = storage.Limit{Rate: 20, Period: time.Hour, Burst: 20}
	}
	h.mux.HandleFunc("GET /invitations/accept", h.invitation)
	h.mux.HandleFunc("POST /invitations/accept", h.form(h.invitationPost))
	h.mux.HandleFunc("GET /signup", h.signUp)
	h.mux.HandleFunc("POST /signup", h.form(h.signUpPost))
	h.mux.HandleFunc("GET /signup/verify", h.signUpVerify)
	h.mux.HandleFunc("POST /signup/verify", h.form(h.signUpVerifyPost))
	h.mux.HandleFunc("GET /password/forgot", h.forgot)
	h.mux.HandleFunc("POST /password/forgot", h.form(h.forgotPost))
	h.mux.HandleFunc("GET /password/reset", h.reset)
	h.mux.HandleFunc("POST /password/reset", h.form(h.resetPost))
	h.mux.HandleFunc("GET /email/confirm", h.emailConfirm)
	h.mux.HandleFunc("POST /email/confirm", h.form(h.emailConfirmPost))
	return h, nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, ok := tenant.FromContext(r.Context()); !ok {
		http.NotFound(w, r)
		return
	}
	h.mux.ServeHTTP(w, r)
}

func siteOf(r *http.Request) *tenant.Site {
	s, _ := tenant.FromContext(r.Context())
	return s
}

// maxForm bounds a submitted form (a password is at most 1 KiB).
const maxForm = 16 << 10

// form checks what every POST needs before it is read: the same origin
// (a browser that says where the form came from must say this site), a
// readable form of bounded size, and the CSRF token of the double-submit
// cookie.
func (h *Handler) form(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		site := siteOf(r)
		// Before the body is read; by the same rule as every other form
		// (the sign-in's too): the site's origin and its aliases.
		if !session.SameOrigin(r, site) {
			h.message(w, r, http.StatusForbidden, "Form not accepted", msg{Message: "This form was sent from another site, so it was not accepted. Nothing was changed.", Alert: true})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		if err := r.ParseForm(); err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				// Send less, not a better-formed form: 413.
				h.message(w, r, http.StatusRequestEntityTooLarge, "Form not accepted", msg{Message: "The form is larger than this page accepts. Nothing was changed.", Alert: true})
				return
			}
			h.message(w, r, http.StatusBadRequest, "Form not accepted", msg{Message: "The form could not be read. Nothing was changed.", Alert: true})
			return
		}
		if !session.CheckCSRF(r, site, nil) {
			h.message(w, r, http.StatusForbidden, "This form has expired", msg{
				Message: "The form expired or did not come from this site. Nothing was changed.", Alert: true,
				Details: []string{"Go back, reload the page and try again."}})
			return
		}
		next(w, r)
	}
}

// msg is the content of a message page.
type msg struct {
	Message string
	Details []string
	Links   []pageLink
	Alert   bool
}

type pageLink struct {
	Label, URL string
	Primary    bool
}

func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, page, title string, data any) {
	site := siteOf(r)
	h.ui.Render(w, r, status, page, ui.Page{Title: title, SiteName: site.Name, CSRF: session.CSRFToken(w, r, site, nil), Data: data})
}

// echo is s as a form shows it back: what is not text (bytes that are not
// UTF-8, control characters) is dropped, never written raw into a UTF-8
// page. Only what is shown is cleaned; the checks see what was sent.
func echo(s string) string {
	return strings.Map(func(r rune) rune {
		if r == utf8.RuneError || unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
}

// t is message id in the language of r's page (package i18n), for text
// with names in it; fixed sentences are translated when the page is
// rendered (i18n.Text).
func (h *Handler) t(r *http.Request, id string, args ...any) string {
	return i18n.T(i18n.Resolve(r, siteOf(r).Locale), id, args...)
}

func (h *Handler) message(w http.ResponseWriter, r *http.Request, status int, title string, m msg) {
	h.render(w, r, status, "accounts_message", title, m)
}

// linkProblem answers a mailed link that does not work: 400 for one that
// never worked here (mistyped, another site's), 410 for one that did (used,
// revoked, expired). Nothing is changed and nothing is redirected.
func (h *Handler) linkProblem(w http.ResponseWriter, r *http.Request, err error, again pageLink) bool {
	switch {
	case errors.Is(err, platform.ErrLinkInvalid):
		h.message(w, r, http.StatusBadRequest, "Link not valid", msg{Alert: true,
			Message: h.t(r, "accounts.link_invalid", "Site", siteOf(r).Name),
			Details: []string{"Check that you opened the whole link from the message, on the site it was sent from."},
			Links:   []pageLink{again}})
	case errors.Is(err, platform.ErrLinkExpired):
		h.message(w, r, http.StatusGone, "Link expired", msg{Alert: true,
			Message: "This link has expired or was already used.",
			Details: []string{"Links in our messages work once and only for a limited time."},
			Links:   []pageLink{again}})
	default:
		return false
	}
	return true
}

// fail answers an unexpected error without internals.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, storage.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
		w.Header().Set("Retry-After", "5")
		h.message(w, r, http.StatusServiceUnavailable, "Temporarily unavailable", msg{Alert: true,
			Message: "This page cannot be shown right now.", Details: []string{"Please try again in a moment."}})
		return
	}
	h.logger.ErrorContext(r.Context(), "account page failed", "path", r.URL.Path, "err", err)
	h.message(w, r, http.StatusInternalServerError, "Something went wrong", msg{Alert: true,
		Message: "The page could not be completed.", Details: []string{"The error was recorded. Please try again."}})
}

// refused reports whether err is a refusal of the sign-in throttle (a
// new password's hash waits for the password gate and spends the site's
// check budget, as a sign-in's check does); if so, it sets Retry-After
// and shows the form again with the refusal's status and sentence, through
// again. Nothing was hashed or changed.
func (h *Handler) refused(w http.ResponseWriter, r *http.Request, err error, again func(status int, message string)) bool {
	var refusal *throttle.Refusal
	if !errors.As(err, &refusal) {
		return false
	}
	w.Header().Set("Retry-After", refusal.RetryAfter())
	again(refusal.Status, refusal.Message(i18n.Resolve(r, siteOf(r).Locale)))
	return true
}

// allowIP applies the per-IP limit of one form; false means the answer
// (429) was written. Addresses are counted as every per-IP limit counts
// them (throttle.Address): an IPv6 address by its /64.
func (h *Handler) allowIP(w http.ResponseWriter, r *http.Request, form string) bool {
	sum := sha256.Sum256([]byte(throttle.Address(tenant.ClientIP(r))))
	key := "{ip" + hex.EncodeToString(sum[:8]) + "}:accounts:" + form
	ok, retry, err := h.cache.Allow(r.Context(), key, h.limit)
	if err != nil {
		h.fail(w, r, err)
		return false
	}
	if !ok {
		h.tooMany(w, r, retry)
		return false
	}
	return true
}

func (h *Handler) tooMany(w http.ResponseWriter, r *http.Request, retry time.Duration) {
	secs := int(retry.Seconds()) + 1
	if retry <= 0 {
		secs = 3600
	}
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	h.message(w, r, http.StatusTooManyRequests, "Too many requests", msg{Alert: true,
		Message: "Too many requests. Please wait a while and try again.",
		Details: []string{"To protect everyone's inbox, this form can be used only a few times an hour."}})
}

// laterDelay is how long after its answer a form's deferred work starts.
const laterDelay = 50 * time.Millisecond

// later runs the part of a form's work whose duration depends on whether
// an account exists, after the answer, so that the answer's timing says
// nothing. At most a few run at once; beyond that the work is done before
// answering (rare, and still answers the same page).
func (h *Handler) later(r *http.Request, what string, f func(ctx context.Context) error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 30*time.Second)
	run := func() {
		defer cancel()
		if err := f(ctx); err != nil {
			h.logger.ErrorContext(ctx, "account mail not queued", "what", what, "err", err)
		}
	}
	done := r.Context().Done() // closed when the handler has returned
	select {
	case h.work <- struct{}{}:
		go func() {
			defer func() { <-h.work }()
			// Start only once the answer is out, so that the work does not
			// compete with it for the CPU or the database. The context
			// ends when the handler returns, a moment before net/http
			// writes the last bytes: hence the short wait too.
			<-done
			time.Sleep(laterDelay)
			run()
		}()
	default:
		run()
	}
}

// audit records an account event at the site.
func (h *Handler) audit(r *http.Request, actor, action, target string) {
	e := &storage.AuditEvent{SiteID: siteOf(r).ID, Actor: actor, Action: action, Target: target, IP: tenant.ClientIP(r), CreatedAt: h.now()}
	if err := h.store.RecordAudit(r.Context(), e); err != nil {
		h.logger.WarnContext(r.Context(), "audit event not recorded", "action", action, "err", err)
	}
}

// signInAndGo starts a session for u and sends the browser to where a
// person with roles at the site starts. A person who has a second factor
// is not signed in here: a link and a password are one factor, so they
// go to the sign-in page, which asks for both and then continues to the
// same place. A browser signed in as u already keeps its session.
func (h *Handler) signInAndGo(w http.ResponseWriter, r *http.Request, u *storage.User, target string) {
	site := siteOf(r)
	ctx := r.Context()
	if target == "" {
		target = "/account/connections"
		if roles, err := h.store.RolesAt(ctx, site.ID, u.ID); err == nil {
			for _, role := range roles {
				if storage.IsOperatorRole(role) {
					target = "/admin"
				}
			}
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	sess, err := h.sessions.Get(r, site)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if sess != nil && sess.UserID == u.ID {
		http.Redirect(w, r, target, http.StatusSeeOther)
		return
	}
	totp, passkeys, err := mfa.HasFactor(ctx, h.store, site.ID, u.ID)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if totp || (passkeys > 0 && mfa.Available(site)) {
		_ = h.sessions.Destroy(w, r, site)
		http.Redirect(w, r, "/login?return_to="+url.QueryEscape(target), http.StatusSeeOther)
		return
	}
	_ = h.sessions.Destroy(w, r, site)
	if _, err := h.sessions.Create(w, r, site, u.ID); err != nil {
		h.fail(w, r, err)
		return
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}
