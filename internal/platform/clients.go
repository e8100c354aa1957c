package platform

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/lectern/lectern/authserver/clientmeta"
	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// CreateClient validates spec and stores the client at site. For a
// confidential client it returns the secret, which is shown once and
// stored only as a SHA-256 hash. Validation failures are
// *clientmeta.MetadataError.
func (p *Platform) CreateClient(ctx context.Context, site tenant.ID, spec clientmeta.ClientSpec) (*storage.Client, string, error) {
	if spec.ResourceServer && spec.Source != storage.SourceAdmin {
		// Registration and metadata documents are anyone's: a resource
		// server reads other clients' tokens, so only operators make one.
		return nil, "", clientmeta.BadMetadata("resource_server", "only the site's operators can make a client a resource server")
	}
	v, err := clientmeta.ValidateClient(spec)
	if err != nil {
		return nil, "", err
	}
	c := newClient(&site, v, spec)
	c.ClientID = newClientID()
	var secret string
	if spec.Confidential {
		secret = NewClientSecret()
		sum := sha256.Sum256([]byte(secret))
		c.SecretHash = sum[:]
	}
	if err := p.Store.CreateClient(ctx, c); err != nil {
		return nil, "", err
	}
	return c, secret, nil
}

// newClient is the record of a validated client (without an ID or secret);
// site is nil for a platform-wide (vendor) client.
func newClient(site *tenant.ID, v *clientmeta.Client, spec clientmeta.ClientSpec) *storage.Client {
	typ := storage.ClientPublic
	if v.Confidential {
		typ = storage.ClientConfidential
	}
	return &storage.Client{
		SiteID: site, Name: v.Name, Audience: v.Audience, Type: typ, ApplicationType: v.ApplicationType,
		RedirectURIs: v.RedirectURIs, Scopes: v.Scopes, Source: spec.Source,
		Reviewed: spec.Reviewed, CreatedBy: spec.CreatedBy, ResourceServer: spec.ResourceServer,
	}
}

// newClientID returns a random client ID ("lct_" and 22 characters).
func newClientID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "lct_" + base64.RawURLEncoding.EncodeToString(b[:])
}

// NewClientSecret returns a 256-bit random client secret.
func NewClientSecret() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return "lcs_" + base64.RawURLEncoding.EncodeToString(b[:])
}

// AddVendor registers a vendor platform: the integration and its
// platform-wide public operator client (Variant A sites match its
// client_name at registration).
func (p *Platform) AddVendor(ctx context.Context, name string, clientNames, redirectURIs []string, scopes []string) (*storage.VendorIntegration, *storage.Client, error) {
	spec := clientmeta.ClientSpec{Name: name, RedirectURIs: redirectURIs, Scopes: scopes, Source: storage.SourceVendor, Reviewed: true, CreatedBy: "lectern vendor add"}
	if len(scopes) == 0 {
		spec.Scopes = append([]string{scope.OpenID, scope.Profile, scope.Email}, scope.OperatorScopes()...)
	}
	meta, err := clientmeta.ValidateClient(spec)
	if err != nil {
		return nil, nil, err
	}
	if meta.Audience != storage.AudienceOperator {
		return nil, nil, clientmeta.BadMetadata("scope", "vendor platforms are operator clients; give operator scopes")
	}
	c := newClient(nil, meta, spec)
	if len(clientNames) == 0 {
		clientNames = []string{name}
	}
	if err := p.vendorNamesFree(ctx, append([]string{c.Name}, clientNames...)); err != nil {
		return nil, nil, err
	}
	v := &storage.VendorIntegration{Name: c.Name, ClientNames: clientNames, ClientID: "vnd_" + newClientID()[4:]}
	if err := p.Store.CreateVendorIntegration(ctx, v, c); err != nil {
		return nil, nil, err
	}
	return v, c, nil
}

// PurgeUnusedClients deletes clients registered by dynamic registration
// that were never used (no authorization completed) within maxAge: abandoned
// registrations should not pile up (docs/decisions.md).
func (p *Platform) PurgeUnusedClients(ctx context.Context, now time.Time, maxAge time.Duration) (int64, error) {
	return p.Store.PurgeUnusedClients(ctx, storage.SourceDCR, now.Add(-maxAge))
}

// AllowCIMDHost accepts Client ID Metadata Documents from host at the site
// named by siteRef (slug or ID, as SiteByRef reads it; "" for every site).
func (p *Platform) AllowCIMDHost(ctx context.Context, host, siteRef string, reviewed bool) (*storage.CIMDHost, error) {
	h, err := tenant.CanonicalHost(strings.ToLower(strings.TrimSpace(host)), "https")
	if err != nil {
		return nil, fmt.Errorf("%w: --host %q must be host[:port]", ErrInvalid, host)
	}
	entry := &storage.CIMDHost{Host: h, Reviewed: reviewed}
	if siteRef != "" {
		s, err := SiteByRef(ctx, p.Store, siteRef)
		if err != nil {
			return nil, err
		}
		entry.SiteID = &s.ID
	}
	if err := p.Store.AllowCIMDHost(ctx, entry); err != nil {
		return nil, err
	}
	return entry, nil
}

// vendorNamesFree refuses a vendor name or client_name that a registered
// vendor already answers to: registration matches client_name against
// every vendor's names and takes the first (authserver's registerVendor),
// so a second vendor answering to the same name could never be reached.
func (p *Platform) vendorNamesFree(ctx context.Context, names []string) error {
	vendors, err := p.Store.ListVendorIntegrations(ctx)
	if err != nil {
		return err
	}
	for _, n := range names {
		if strings.TrimSpace(n) == "" {
			return clientmeta.BadMetadata("client_name", "a vendor's client names must not be empty")
		}
		for _, v := range vendors {
			if clientmeta.MatchVendorName(n, append([]string{v.Name}, v.ClientNames...)) {
				return fmt.Errorf("%w: vendor %q (%s) already answers to the name %q; registration could never reach a second one", storage.ErrConflict, v.Name, v.ClientID, n)
			}
		}
	}
	return nil
}
