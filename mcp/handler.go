package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lectern/lectern/authserver/bearer"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/vocab"
)

// Store is what the tools read and change: a site's public catalog, one
// member's own data, the operators' views, and a person's roles at a site.
type Store interface {
	SearchCourses(ctx context.Context, site tenant.ID, q storage.CourseQuery) ([]storage.Course, int, error)
	CourseBySlug(ctx context.Context, site tenant.ID, slug string) (*storage.CourseDetail, error)
	ListUpcomingEvents(ctx context.Context, site tenant.ID, from time.Time, p storage.Page) ([]storage.Event, int, error)
	Offerings(ctx context.Context, site tenant.ID, now time.Time) (*storage.Offerings, error)
	Categories(ctx context.Context, site tenant.ID) ([]string, error)

	ListEnrollments(ctx context.Context, site tenant.ID, userID string, p storage.Page) ([]storage.EnrollmentView, int, error)
	LastWatched(ctx context.Context, site tenant.ID, userID string, courseIDs []int64) (map[int64]storage.LectureProgress, error)
	CourseProgress(ctx context.Context, site tenant.ID, userID string, courseID int64) ([]storage.LectureProgress, error)
	ListProductPurchases(ctx context.Context, site tenant.ID, userID string, p storage.Page) ([]storage.ProductPurchaseView, int, error)
	ListConsultingPurchases(ctx context.Context, site tenant.ID, userID string, p storage.Page) ([]storage.ConsultingPurchaseView, int, error)
	ListEventRegistrations(ctx context.Context, site tenant.ID, userID string, p storage.Page) ([]storage.EventRegistrationView, int, error)
	ListNotifications(ctx context.Context, site tenant.ID, userID string, p storage.Page, unreadOnly bool) ([]storage.Notification, int, error)
	UnreadNotificationCount(ctx context.Context, site tenant.ID, userID string) (int, error)
	MarkNotificationRead(ctx context.Context, site tenant.ID, userID string, id int64, at time.Time) (*storage.Notification, error)

	ListCourses(ctx context.Context, site tenant.ID, includeDrafts bool, p storage.Page) ([]storage.Course, int, error)
	ListStudents(ctx context.Context, site tenant.ID, search string, p storage.Page) ([]storage.StudentView, int, error)
	RecentOrders(ctx context.Context, site tenant.ID, p storage.Page) ([]storage.OrderView, int, error)
	SalesSummary(ctx context.Context, site tenant.ID, from, to time.Time) (*storage.SalesSummary, error)

	RolesAt(ctx context.Context, site tenant.ID, userID string) ([]string, error)
}

var _ Store = (storage.Store)(nil)

// Authenticator verifies the bearer token of a request at the request's
// site (*bearer.Verifier).
type Authenticator interface {
	Authenticate(r *http.Request) (*bearer.Token, error)
}

var _ Authenticator = (*bearer.Verifier)(nil)

// Options configures New. Store and Auth are required.
type Options struct {
	Store Store
	Auth  Authenticator
	// Logger receives failures of dependencies. Default: discard.
	Logger *slog.Logger
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// MaxServers bounds the cache of built servers (one per site, site
	// version and tool set). Zero means DefaultMaxServers.
	MaxServers int
}

// DefaultMaxServers is the default bound of the server cache. A built
// server keeps about 6 KB (catalog tools) to 9 KB (every tool); a site has a
// handful of tool sets in use (anonymous, member, a few operator scope
// sets). Building one costs 0.5 to 1.4 ms and 200 to 600 KB of garbage
// (BenchmarkMCPServerBuild), more than the rest of a request.
const DefaultMaxServers = 4096

// maxBody bounds a request body, as the router does for every route.
const maxBody = vocab.MaxBodyBytes

// Handler is /mcp: MCP over Streamable HTTP, stateless (any replica answers
// any request), one logical server per site and tool set.
//
// Each request passes, in order: the Origin check (DNS rebinding, see
// originAllowed); the method (Methods; anything else is 405, as is a GET
// for an event stream); authentication (no Authorization header:
// anonymous; a header with anything but a valid token of this site: 401
// invalid_token, never anonymous); for POST, the checks the go-sdk lacks
// or answers otherwise (an unknown MCP-Protocol-Version, batches, ids it
// cannot answer unchanged: unsupportedVersion, batchRefusal, idRefusal);
// the tool gate (a tools/call of a tool the caller may not use gets the
// HTTP challenge a client can act on: 401 with scope without a token, 403
// insufficient_scope with one); then the go-sdk's handler with the server
// of the caller's tool set, so that tools/list shows exactly the usable
// tools.
type Handler struct {
	store  Store
	auth   Authenticator
	logger *slog.Logger
	// sdkLogger is logger for the SDK, warnings and errors only.
	sdkLogger *slog.Logger
	tools     *tools
	servers   *serverCache
	schemas   *gomcp.SchemaCache
	sdk       *gomcp.StreamableHTTPHandler
}

// New returns a Handler. It panics without Store or Auth (a wiring mistake).
func New(o Options) *Handler {
	if o.Store == nil || o.Auth == nil {
		panic("mcp: New needs Options.Store and Options.Auth")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxServers <= 0 {
		o.MaxServers = DefaultMaxServers
	}
	h := &Handler{
		store:     o.Store,
		auth:      o.Auth,
		logger:    o.Logger,
		sdkLogger: slog.New(quietHandler{o.Logger.Handler(), slog.LevelWarn}),
		tools:     &tools{store: o.Store, now: o.Now, logger: o.Logger},
		servers:   newServerCache(o.MaxServers),
		schemas:   gomcp.NewSchemaCache(),
	}
	h.sdk = gomcp.NewStreamableHTTPHandler(h.serverFor, &gomcp.StreamableHTTPOptions{
		// No session state: any replica answers any request (DESIGN §7).
		Stateless: true,
		// Nothing is streamed: a tool call has one answer.
		JSONResponse: true,
		// The SDK's own rebinding check refuses a loopback connection whose
		// Host is not loopback: every request through a sidecar proxy on
		// localhost. Site resolution already refuses hosts that are no site,
		// and originAllowed refuses foreign browsers.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        maxBody,
		Logger:                     h.sdkLogger,
	})
	return h
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	site, ok := tenant.FromContext(r.Context())
	if !ok {
		tenant.WriteError(w, http.StatusNotFound, "not_found", "no site is served at this host")
		return
	}
	if !originAllowed(site, r.Header.Values("Origin")) {
		tenant.WriteError(w, http.StatusForbidden, "invalid_origin",
			"requests from another origin are refused: the MCP server answers this site's own pages and clients that send no Origin")
		return
	}
	info := false
	switch r.Method {
	case http.MethodPost:
	case http.MethodGet, http.MethodHead:
		if info = !acceptsEventStream(r); !info {
			methodNotAllowed(w, r)
			return
		}
	case http.MethodOptions:
		w.Header().Set("Allow", allow)
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		methodNotAllowed(w, r)
		return
	}
	c, err := h.authenticate(r, site)
	if err != nil {
		bearer.WriteError(w, site, err)
		return
	}
	if info {
		serveInfo(w, site)
		return
	}
	body, err := readBody(w, r)
	if err != nil {
		tenant.WriteError(w, http.StatusRequestEntityTooLarge, "request_too_large",
			"the request body is larger than this endpoint accepts ("+strconv.Itoa(maxBody>>20)+" MiB)")
		return
	}
	heads, batch := readHeads(body)
	id := requestID(heads, batch)
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && !slices.Contains(supportedVersions, v) {
		writeRPCError(w, http.StatusBadRequest, id, unsupportedVersion(v))
		return
	}
	if why := batchRefusal(r, body); why != "" {
		writeRPCError(w, http.StatusBadRequest, nil, rpcError{Code: rpcInvalidRequest, Message: "Invalid Request: " + why})
		return
	}
	if why := idRefusal(heads); why != "" {
		writeRPCError(w, http.StatusBadRequest, nil, rpcError{Code: rpcInvalidRequest, Message: "Invalid Request: " + why})
		return
	}
	if i, refused := gate(body, c); refused {
		challenge(w, site, c, &registry[i])
		return
	}
	// The SDK sets "no-cache, no-transform" on its answers; noStoreWriter
	// puts back no-store: answers carry members' data (RFC 9111 §5.2.2.5).
	sw := &sdkErrorWriter{ResponseWriter: &noStoreWriter{ResponseWriter: w}, validJSON: json.Valid(body), id: id}
	if len(heads) == 1 && !batch {
		sw.method = heads[0].Method
	}
	h.sdk.ServeHTTP(sw, r.WithContext(withCaller(r.Context(), c)))
	sw.finish()
}

// authenticate returns the caller of r. Only a request without any
// Authorization header is anonymous: a client that sent credentials must
// learn that they failed (RFC 6750 §3.1), not be served as somebody else.
func (h *Handler) authenticate(r *http.Request, site *tenant.Site) (*caller, error) {
	tok, err := h.auth.Authenticate(r)
	switch {
	case err == nil:
	case errors.Is(err, bearer.ErrNoToken) && len(r.Header.Values("Authorization")) == 0:
		return anonymous, nil
	case errors.Is(err, bearer.ErrNoToken):
		return nil, bearer.InvalidToken("the Authorization header must carry a Bearer access token")
	default:
		return nil, err
	}
	if tok.Site != site.ID {
		return nil, bearer.InvalidToken("the access token was not issued for this site")
	}
	roles, err := h.store.RolesAt(r.Context(), site.ID, tok.Subject)
	if err != nil {
		h.logger.ErrorContext(r.Context(), "mcp: roles", "err", err)
		return nil, bearer.TemporarilyUnavailable(err)
	}
	return newCaller(tok, roles), nil
}

// serverFor is the SDK's getServer: the server of the request's site and
// the caller's tool set. It is called more than once per request, so it
// must be cheap (a cache lookup).
func (h *Handler) serverFor(r *http.Request) *gomcp.Server {
	site, ok := tenant.FromContext(r.Context())
	if !ok {
		return nil
	}
	c, ok := callerFrom(r.Context())
	if !ok {
		return nil
	}
	return h.servers.get(site, c.mask, h.build)
}

func acceptsEventStream(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		if strings.Contains(strings.ToLower(v), "text/event-stream") {
			return true
		}
	}
	return false
}
