package web

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/lectern/lectern/authserver/throttle"
	"github.com/lectern/lectern/internal/brand"
	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/limits"
	"github.com/lectern/lectern/session"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/ui"
)

// Store is what the pages read and write directly; application changes go
// through platform.Platform.
type Store interface {
	SiteByID(ctx context.Context, id tenant.ID) (*storage.Site, error)
	UserByID(ctx context.Context, id string) (*storage.User, error)
	SetUserLanguage(ctx context.Context, userID, lang string) error
	Appearance(ctx context.Context, site tenant.ID) (*storage.Appearance, error)
	SaveAppearance(ctx context.Context, a *storage.Appearance) error
	RolesAt(ctx context.Context, site tenant.ID, userID string) ([]string, error)
	ClientByID(ctx context.Context, site tenant.ID, clientID string) (*storage.Client, error)
	GrantByID(ctx context.Context, site tenant.ID, id string) (*storage.Grant, error)
	LiveGrants(ctx context.Context, site tenant.ID, q storage.GrantQuery) ([]storage.Grant, int, error)
	LiveGrantCounts(ctx context.Context, site tenant.ID, at time.Time) (map[string]int, error)
	ListAudit(ctx context.Context, site tenant.ID, before int64, limit int) ([]storage.AuditEvent, error)
	RecordAudit(ctx context.Context, e *storage.AuditEvent) error
	SaveConsent(ctx context.Context, c *storage.Consent) error
	ListMembers(ctx context.Context, site tenant.ID, role string, p storage.Page) ([]storage.MemberView, int, error)
	UserByEmail(ctx context.Context, email string) (*storage.User, error)
	InvitationByID(ctx context.Context, site tenant.ID, id int64) (*storage.Invitation, error)
	ListInvitations(ctx context.Context, site tenant.ID, p storage.Page) ([]storage.Invitation, int, error)
	// The second factors of the account page (account_security.go).
	storage.FactorStore
}

// Options configures New. Every field but Now is required.
type Options struct {
	Store Store
	// Cache keeps flash messages (and the one-time client secrets they
	// carry) under the session.
	Cache storage.Cache
	// Platform creates, changes and deletes applications and sites.
	Platform *platform.Platform
	// Sessions are the authorization server's browser sessions.
	Sessions *session.Store
	// Revoker revokes grants durably and in the cache, so their tokens are
	// refused at once (authserver/bearer's Verifier).
	Revoker platform.Revoker
	// Pictures keeps the account pictures people upload (the admin API's
	// upload store, in its platform area).
	Pictures PictureStore
	Logger   *slog.Logger
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Limits are the platform's limits, which Settings shows and lets
	// owners and admins set for their site. Nil: the built-in defaults.
	Limits *limits.Config
	// Brand is the sites' looks: pages wear them, /brand.css and
	// /favicon.svg serve them, Settings changes them. Required.
	Brand *brand.Source
	// Throttle is the sign-in throttle the e-mail change's current
	// password goes through: the authorization server's (its Throttle),
	// so failures count with the sign-in form's and checks share its
	// password gate. Nil: one over Cache and Limits with a gate of its
	// own (failures still count together: the counters are in Cache).
	Throttle *throttle.Throttle
}

// Handler serves /admin and /account.
type Handler struct {
	store    Store
	cache    storage.Cache
	platform *platform.Platform
	sessions *session.Store
	revoker  platform.Revoker
	pictures PictureStore
	logger   *slog.Logger
	now      func() time.Time
	ui       *ui.Renderer
	mux      *http.ServeMux
	limits   *limits.Config
	brand    *brand.Source
	throttle *throttle.Throttle
}

var _ http.Handler = (*Handler)(nil)

// New returns the handler of the admin area and the account pages.
func New(o Options) (*Handler, error) {
	if o.Store == nil || o.Cache == nil || o.Platform == nil || o.Sessions == nil || o.Revoker == nil || o.Pictures == nil || o.Logger == nil || o.Brand == nil {
		return nil, errors.New("web: Store, Cache, Platform, Sessions, Revoker, Pictures, Logger and Brand are required")
	}
	pages, err := pageFS()
	if err != nil {
		return nil, err
	}
	renderer, err := ui.NewRenderer(o.Logger, pages)
	if err != nil {
		return nil, err
	}
	renderer.WithBrand(o.Brand)
	h := &Handler{
		store: o.Store, cache: o.Cache, platform: o.Platform, sessions: o.Sessions, revoker: o.Revoker,
		pictures: o.Pictures, logger: o.Logger, now: o.Now, ui: renderer, mux: http.NewServeMux(), limits: o.Limits, brand: o.Brand,
		throttle: o.Throttle,
	}
	if h.now == nil {
		h.now = time.Now
	}
	if h.throttle == nil {
		h.throttle = throttle.New(throttle.Options{Cache: o.Cache, Limits: o.Limits, Now: h.now, Logger: o.Logger})
	}
	h.routes()
	return h, nil
}

// routes is the page map. Each route names who may see it (see access).
func (h *Handler) routes() {
	h.handle("GET /admin", operator, h.dashboard)
	h.handle("GET /admin/{$}", operator, redirectTo("/admin"))
	h.handle("GET /admin/settings", manager, h.settings)
	h.handle("POST /admin/settings/beta", manager, h.betaToggle)
	h.handle("POST /admin/settings/accounts", manager, h.accountSettings)
	h.handle("POST /admin/settings/appearance", manager, h.appearanceSave)
	h.handle("GET /admin/members", manager, h.members)
	h.handle("POST /admin/members", manager, h.memberInvite)
	h.handle("POST /admin/members/invitations/{id}/resend", manager, h.invitationResend)
	h.handle("GET /admin/members/invitations/{id}/revoke", manager, h.invitationRevokeConfirm)
	h.handle("POST /admin/members/invitations/{id}/revoke", manager, h.invitationRevoke)
	h.handle("POST /admin/settings/limits", manager, h.limitsSave)

	h.handle("GET /admin/developers/apps", developers, h.appList)
	h.handle("POST /admin/developers/apps", developers, h.appCreate)
	h.handle("GET /admin/developers/apps/new", developers, h.appNew)
	h.handle("GET /admin/developers/apps/{id}", developers, h.appShow)
	h.handle("POST /admin/developers/apps/{id}", developers, h.appUpdate)
	h.handle("GET /admin/developers/apps/{id}/rotate-secret", developers, h.appRotateConfirm)
	h.handle("POST /admin/developers/apps/{id}/rotate-secret", developers, h.appRotate)
	h.handle("GET /admin/developers/apps/{id}/delete", developers, h.appDeleteConfirm)
	h.handle("POST /admin/developers/apps/{id}/delete", developers, h.appDelete)
	h.handle("GET /admin/developers/connections", developers, h.grantList)
	h.handle("GET /admin/developers/connections/{grant}/revoke", developers, h.grantRevokeConfirm)
	h.handle("POST /admin/developers/connections/{grant}/revoke", developers, h.grantRevoke)
	h.handle("GET /admin/audit", manager, h.auditLog)
	h.handle("/admin/", operator, h.notFound)

	h.handle("GET /account", signedIn, h.account)
	h.handle("GET /account/{$}", signedIn, redirectTo("/account"))
	h.handleUpload("POST "+picturePath, signedIn, PictureBodyLimit, h.pictureUpload)
	h.handle("POST "+picturePath+"/remove", signedIn, h.pictureRemove)
	h.handle("GET /account/connections", signedIn, h.connections)
	h.handle("GET /account/email", signedIn, h.emailPage)
	h.handle("POST /account/email", signedIn, h.emailChange)
	h.handle("GET /account/connections/revoke", signedIn, h.connectionRevokeConfirm)
	h.handle("POST /account/connections/revoke", signedIn, h.connectionRevoke)
	h.handle("GET "+securityPath, signedIn, h.security)
	h.handle("POST "+securityPath+"/totp", signedIn, h.totpStart)
	h.handle("GET "+securityPath+"/totp/qr.png", signedIn, h.totpQR)
	h.handle("POST "+securityPath+"/totp/confirm", signedIn, h.totpConfirm)
	h.handle("POST "+securityPath+"/totp/disable", signedIn, h.totpDisable)
	h.handle("POST "+securityPath+"/passkeys/begin", signedIn, h.passkeyBegin)
	h.handle("POST "+securityPath+"/passkeys/finish", signedIn, h.passkeyFinish)
	h.handle("POST "+securityPath+"/passkeys/{id}/rename", signedIn, h.passkeyRename)
	h.handle("POST "+securityPath+"/passkeys/{id}/remove", signedIn, h.passkeyRemove)
	h.handle("POST "+securityPath+"/sessions/end-all", signedIn, h.sessionEndAll)
	h.handle("POST "+securityPath+"/sessions/{handle}/end", signedIn, h.sessionEnd)
	h.handle("/account/", signedIn, h.notFound)

	// Public: the picture claim points here (avatar.go).
	h.mux.HandleFunc(generatedAvatarPattern, h.generatedAvatar)
	h.mux.HandleFunc(uploadedAvatarPattern, h.uploadedAvatar)

	// Public: the site's brand, and the language selector (language.go).
	h.mux.HandleFunc("GET "+brand.StylesheetPath, h.brand.ServeStylesheet)
	h.mux.HandleFunc("GET "+brand.IconPath, h.brand.ServeIcon)
	h.mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, brand.IconPath, http.StatusMovedPermanently)
	})
	h.mux.HandleFunc("GET "+ui.LanguagePath, h.chooseLanguage)
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, ok := tenant.FromContext(r.Context()); !ok {
		// The tenant middleware resolves every site path; without a site
		// there is nothing to show.
		http.NotFound(w, r)
		return
	}
	h.mux.ServeHTTP(w, r)
}

func redirectTo(target string) pageFunc {
	return func(w http.ResponseWriter, r *http.Request, rq *request) {
		seeOther(w, r, target)
	}
}

// seeOther answers 303, the redirect after a POST (and for plain moves).
func seeOther(w http.ResponseWriter, r *http.Request, target string) {
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, target, http.StatusSeeOther)
}
