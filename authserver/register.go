package authserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lectern/lectern/authserver/clientmeta"
	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/authserver/throttle"
	"github.com/lectern/lectern/internal/jsonx"
	"github.com/lectern/lectern/limits"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// maxRegistrationBody bounds a registration's body; registrations per
// minute per IP and site are limits.RegisterPerIP (DESIGN §10).
const maxRegistrationBody = 16 << 10

// registrationRequest is RFC 7591 §2 client metadata. Fields we do not know
// are ignored (§2); fields we know but cannot honour are refused.
type registrationRequest struct {
	RedirectURIs            []string        `json:"redirect_uris"`
	TokenEndpointAuthMethod string          `json:"token_endpoint_auth_method"`
	GrantTypes              []string        `json:"grant_types"`
	ResponseTypes           []string        `json:"response_types"`
	ClientName              string          `json:"client_name"`
	ClientURI               string          `json:"client_uri"`
	LogoURI                 string          `json:"logo_uri"`
	TOSURI                  string          `json:"tos_uri"`
	PolicyURI               string          `json:"policy_uri"`
	Scope                   string          `json:"scope"`
	Contacts                []string        `json:"contacts"`
	ApplicationType         string          `json:"application_type"`
	SoftwareID              string          `json:"software_id"`
	SoftwareVersion         string          `json:"software_version"`
	JWKS                    json.RawMessage `json:"jwks"`
	JWKSURI                 string          `json:"jwks_uri"`
}

// registrationResponse is RFC 7591 §3.2.1.
type registrationResponse struct {
	ClientID                string   `json:"client_id"`
	ClientSecret            string   `json:"client_secret,omitempty"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at"`
	ClientSecretExpiresAt   *int64   `json:"client_secret_expires_at,omitempty"`
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	Scope                   string   `json:"scope"`
	ApplicationType         string   `json:"application_type"`
}

// Register implements POST /api/oauth/register by the site's variant
// (spec §Authentication 5, DESIGN §6):
//   - Variant A returns the pre-registered client of the vendor platform
//     whose name matches client_name; nothing new is created.
//   - Variant B is RFC 7591 open registration for clients whose every
//     redirect URI is loopback http.
func (s *Server) Register(w http.ResponseWriter, r *http.Request) {
	site := siteOf(r.Context())
	w.Header().Set("Cache-Control", "no-store")
	ctx := r.Context()
	ok, retry, err := s.cache.Allow(ctx, storage.CacheKey(site.ID, "rl:register", throttle.Address(tenant.ClientIP(r))), s.rateOf(ctx, limits.RegisterPerIP))
	switch {
	case err != nil:
		s.logger.ErrorContext(ctx, "registration rate limit unavailable", "err", err)
		writeOAuthError(w, errUnavailable(unavailableText))
		return
	case !ok:
		writeOAuthError(w, errRateLimited("too many registrations from this address; try again later", retry))
		return
	}
	req, merr := decodeRegistration(r)
	if merr != nil {
		writeOAuthError(w, metadataError(merr))
		return
	}
	if site.Variant == tenant.VariantVendor {
		s.registerVendor(w, r, site, req)
		return
	}
	s.registerOpen(w, r, site, req)
}

func decodeRegistration(r *http.Request) (*registrationRequest, *clientmeta.MetadataError) {
	bad := func(field, desc string) *clientmeta.MetadataError {
		return &clientmeta.MetadataError{Code: clientmeta.InvalidClientMetadata, Field: field, Description: desc}
	}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" {
		return nil, bad("", "the registration request must be an application/json body (RFC 7591 §3.1)")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRegistrationBody+1))
	if err != nil {
		return nil, bad("", "the request body could not be read")
	}
	if len(body) > maxRegistrationBody {
		return nil, bad("", "the client metadata is larger than 16 KiB")
	}
	var req registrationRequest
	dec := json.NewDecoder(strings.NewReader(string(body)))
	if err := dec.Decode(&req); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, bad(te.Field, te.Field+": has the wrong type (want "+te.Type.String()+")")
		}
		return nil, bad("", "the body is not a JSON object of client metadata")
	}
	if dec.More() {
		return nil, bad("", "the body holds more than one JSON value")
	}
	if name, dup := jsonx.DuplicateKey(body); dup {
		return nil, bad(name, name+": is given more than once")
	}
	if jsonx.BadText(body) {
		return nil, bad("", "the body is not valid UTF-8 text, or escapes half a UTF-16 surrogate pair")
	}
	return &req, nil
}

// registerOpen is Variant B: RFC 7591 for loopback clients.
func (s *Server) registerOpen(w http.ResponseWriter, r *http.Request, site *tenant.Site, req *registrationRequest) {
	bad := func(field, desc string) {
		writeOAuthError(w, oauthError(codeInvalidClientMetadata, field+": "+desc))
	}
	if len(req.JWKS) > 0 || req.JWKSURI != "" {
		bad("jwks", "key-based client authentication is not supported; use token_endpoint_auth_method none or client_secret_post")
		return
	}
	confidential := false
	switch req.TokenEndpointAuthMethod {
	case "", "none":
	case "client_secret_post":
		confidential = true
	case "client_secret_basic":
		bad("token_endpoint_auth_method", "client_secret_basic is not supported; use client_secret_post or none")
		return
	default:
		bad("token_endpoint_auth_method", "must be none or client_secret_post")
		return
	}
	for _, gt := range req.GrantTypes {
		if gt != "authorization_code" && gt != "refresh_token" {
			bad("grant_types", strconv.Quote(clientmeta.Truncate(gt, 60))+" is not supported; only authorization_code and refresh_token")
			return
		}
	}
	if len(req.GrantTypes) > 0 && !slices.Contains(req.GrantTypes, "authorization_code") {
		bad("grant_types", "must include authorization_code")
		return
	}
	for _, rt := range req.ResponseTypes {
		if rt != "code" {
			bad("response_types", strconv.Quote(clientmeta.Truncate(rt, 60))+" is not supported; only code")
			return
		}
	}
	for field, v := range map[string]string{"client_uri": req.ClientURI, "logo_uri": req.LogoURI, "tos_uri": req.TOSURI, "policy_uri": req.PolicyURI} {
		if v != "" && !clientmeta.IsHTTPSURL(v) {
			bad(field, "must be an https URL")
			return
		}
	}
	if len(req.Contacts) > 5 {
		bad("contacts", "at most 5 contacts")
		return
	}
	for _, c := range req.Contacts {
		if len(c) > 320 {
			bad("contacts", "an entry is longer than 320 characters")
			return
		}
	}
	if len(req.SoftwareID) > 200 || len(req.SoftwareVersion) > 200 {
		bad("software_id", "software_id and software_version have at most 200 characters")
		return
	}
	if req.ClientName == "" {
		req.ClientName = "Unnamed application"
	}
	c, secret, err := s.platform.CreateClient(r.Context(), site.ID, clientmeta.ClientSpec{
		Name: req.ClientName, RedirectURIs: req.RedirectURIs, LoopbackOnly: true,
		Scopes: scope.Parse(req.Scope), Confidential: confidential, ApplicationType: req.ApplicationType,
		Source: storage.SourceDCR, CreatedBy: "registration from " + tenant.ClientIP(r),
	})
	var merr *clientmeta.MetadataError
	switch {
	case errors.As(err, &merr):
		writeOAuthError(w, metadataError(merr))
		return
	case err != nil:
		s.logger.ErrorContext(r.Context(), "registration", "err", err)
		writeOAuthError(w, errUnavailable("registration is temporarily unavailable"))
		return
	}
	s.audit(r.Context(), site.ID, "anonymous", "client.registered", c.ClientID, r, map[string]any{"name": c.Name, "audience": c.Audience, "redirect_uris": c.RedirectURIs})
	resp := registrationResponse{
		ClientID: c.ClientID, ClientIDIssuedAt: c.CreatedAt.Unix(), ClientName: c.Name, RedirectURIs: c.RedirectURIs,
		GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
		TokenEndpointAuthMethod: "none", Scope: scope.Join(c.Scopes), ApplicationType: c.ApplicationType,
	}
	if secret != "" {
		zero := int64(0) // the secret does not expire
		resp.ClientSecret, resp.ClientSecretExpiresAt, resp.TokenEndpointAuthMethod = secret, &zero, "client_secret_post"
	}
	writeJSON(w, http.StatusCreated, resp)
}

// registerVendor is Variant A: a known vendor platform gets its
// pre-registered client back; everyone else is told how to proceed.
func (s *Server) registerVendor(w http.ResponseWriter, r *http.Request, site *tenant.Site, req *registrationRequest) {
	ctx := r.Context()
	vendors, err := s.vendors.list(ctx)
	if err != nil {
		s.logger.ErrorContext(ctx, "vendor integrations", "err", err)
		writeOAuthError(w, errUnavailable("registration is temporarily unavailable"))
		return
	}
	var match *storage.VendorIntegration
	for i := range vendors {
		if clientmeta.MatchVendorName(req.ClientName, append([]string{vendors[i].Name}, vendors[i].ClientNames...)) {
			match = &vendors[i]
			break
		}
	}
	if match == nil {
		writeOAuthError(w, oauthError(codeInvalidClientMetadata, "client_name: "+strconv.Quote(clientmeta.Truncate(req.ClientName, 80))+" is not a vendor platform registered with "+site.Name+
			"; this site has no open registration: publish a Client ID Metadata Document and use its https URL as client_id, or ask the site's operators for an application"))
		return
	}
	c, err := s.client(ctx, site, match.ClientID)
	if err != nil {
		s.logger.ErrorContext(ctx, "vendor client", "vendor", match.Name, "err", err)
		writeOAuthError(w, errUnavailable("registration is temporarily unavailable"))
		return
	}
	if req.TokenEndpointAuthMethod != "" && req.TokenEndpointAuthMethod != "none" {
		writeOAuthError(w, oauthError(codeInvalidClientMetadata, "token_endpoint_auth_method: "+match.Name+" is a public client (none)"))
		return
	}
	for _, u := range req.RedirectURIs {
		if !clientmeta.MatchRedirectURI(c.RedirectURIs(), u) {
			writeOAuthError(w, oauthError(codeInvalidRedirectURI, "redirect_uris: "+strconv.Quote(clientmeta.Truncate(u, 80))+" is not registered for "+match.Name))
			return
		}
	}
	writeJSON(w, http.StatusCreated, registrationResponse{
		ClientID: c.ClientID, ClientIDIssuedAt: c.CreatedAt.Unix(), ClientName: match.Name, RedirectURIs: c.RedirectURIs(),
		GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
		TokenEndpointAuthMethod: "none", Scope: scope.Join(c.Scopes), ApplicationType: c.Client.ApplicationType,
	})
}

// vendorCache keeps the (small, platform-wide) list of vendor integrations.
type vendorCache struct {
	store interface {
		ListVendorIntegrations(ctx context.Context) ([]storage.VendorIntegration, error)
	}
	now func() time.Time

	mu      sync.Mutex
	vendors []storage.VendorIntegration
	expires time.Time
}

func (vc *vendorCache) list(ctx context.Context) ([]storage.VendorIntegration, error) {
	vc.mu.Lock()
	defer vc.mu.Unlock()
	if vc.vendors != nil && vc.now().Before(vc.expires) {
		return vc.vendors, nil
	}
	vs, err := vc.store.ListVendorIntegrations(ctx)
	if err != nil {
		return nil, err
	}
	if vs == nil {
		vs = []storage.VendorIntegration{}
	}
	vc.vendors, vc.expires = vs, vc.now().Add(30*time.Second)
	return vs, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
