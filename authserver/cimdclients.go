package authserver

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lectern/lectern/authserver/cimd"
	"github.com/lectern/lectern/authserver/clientmeta"
	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// CIMDClients resolves client IDs that are Client ID Metadata Document URLs
// (DESIGN §6). A document is accepted only from a host the site allows: an
// allowlisted host (platform-wide or the site's own entry), or any host on
// sites with cimd_open and on open-registration (Variant B) sites. The
// allowlist entry's review state decides whether the client is reviewed;
// unreviewed clients get identity and *:read scopes only (checkScopes).
type CIMDClients struct {
	Fetcher *cimd.Fetcher
	Store   interface {
		CIMDHost(ctx context.Context, site tenant.ID, host string) (*storage.CIMDHost, error)
	}
	Now func() time.Time

	mu    sync.Mutex
	cache map[clientKey]cimdEntry
	// failed holds the fetches that failed, per site and URL, for
	// cimdFailureTTL: asking again for a URL that just failed answers
	// the same without fetching it again.
	failed map[clientKey]cimdFailure
}

type cimdEntry struct {
	client  *Client
	expires time.Time
}

type cimdFailure struct {
	description string // the *ClientError's
	expires     time.Time
}

// cimdClientTTL bounds how long a resolved CIMD client is kept in memory
// (the document itself is cached, honouring Cache-Control, by the fetcher).
const cimdClientTTL = time.Minute

// cimdFailureTTL is how long a failed fetch is remembered (negative
// caching): long enough that repeating a failing URL does not make the
// server fetch it again and again, short enough that a client that fixes
// its document (or its server coming back) is not kept out for long.
// maxFailedClients bounds the failures kept, per replica; in memory, not
// in the shared cache, so that failures a stranger causes never fill the
// cache every site shares.
const (
	cimdFailureTTL   = 30 * time.Second
	maxFailedClients = 10000
)

var _ ClientSource = (*CIMDClients)(nil)

// Client implements ClientSource. Failures a person should read are
// *ClientError.
func (cc *CIMDClients) Client(ctx context.Context, site *tenant.Site, clientID string) (*Client, error) {
	return cc.ClientAdmitted(ctx, site, clientID, nil)
}

// ClientAdmitted is Client, but before a document must be fetched (it is
// in neither this cache nor the fetcher's) it asks admit whether the
// request may cause a fetch (cimd.Fetcher.FetchAdmitted); admit's error
// is returned as it is. The authorization endpoint charges its rate
// limits there.
func (cc *CIMDClients) ClientAdmitted(ctx context.Context, site *tenant.Site, clientID string, admit func(context.Context) error) (*Client, error) {
	if !cimd.IsClientIDURL(clientID) {
		return nil, storage.ErrNotFound
	}
	now := cc.Now()
	k := clientKey{site.ID, clientID}
	cc.mu.Lock()
	if e, ok := cc.cache[k]; ok && now.Before(e.expires) {
		cc.mu.Unlock()
		return e.client, nil
	}
	if f, ok := cc.failed[k]; ok && now.Before(f.expires) {
		cc.mu.Unlock()
		return nil, &ClientError{Description: f.description}
	}
	cc.mu.Unlock()

	u, err := cimd.ValidateClientIDURL(clientID)
	if err != nil {
		return nil, clientErr(err)
	}
	host := cimd.Host(u)
	allowed, reviewed := site.CIMDOpen || site.Variant == tenant.VariantOpen, false
	entry, err := cc.Store.CIMDHost(ctx, site.ID, host)
	switch {
	case err == nil:
		allowed, reviewed = true, entry.Reviewed
	case !errors.Is(err, storage.ErrNotFound):
		return nil, err
	}
	if !allowed {
		return nil, &ClientError{Description: "Client ID Metadata Documents from " + host + " are not accepted at " + site.Name + "; the site's operators can allow this host."}
	}
	doc, err := cc.Fetcher.FetchAdmitted(ctx, clientID, admit)
	if err != nil {
		var ce *cimd.Error
		// A caller that gave up (its context ended) says nothing about
		// the document.
		if errors.As(err, &ce) && ctx.Err() == nil {
			cc.rememberFailure(k, ce.Description, now)
		}
		return nil, clientErr(err)
	}
	c, err := cimdClient(site, doc, reviewed)
	if err != nil {
		return nil, err
	}
	cc.mu.Lock()
	if cc.cache == nil || len(cc.cache) >= maxCachedClients {
		cc.cache = map[clientKey]cimdEntry{}
	}
	cc.cache[k] = cimdEntry{client: c, expires: now.Add(cimdClientTTL)}
	cc.mu.Unlock()
	return c, nil
}

// rememberFailure keeps a failed fetch of k for cimdFailureTTL.
func (cc *CIMDClients) rememberFailure(k clientKey, description string, now time.Time) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.failed == nil || len(cc.failed) >= maxFailedClients {
		cc.failed = map[clientKey]cimdFailure{}
	}
	cc.failed[k] = cimdFailure{description: description, expires: now.Add(cimdFailureTTL)}
}

// cimdClient builds the client a document describes. On Variant A sites
// CIMD clients are operator clients (DESIGN §6); on Variant B the scope the
// document declares decides, as for registration.
func cimdClient(site *tenant.Site, doc *cimd.Document, reviewed bool) (*Client, error) {
	declared := scope.Parse(doc.Scope)
	audience := storage.AudienceOperator
	var allowed []string
	if site.Variant == tenant.VariantOpen {
		var err error
		if allowed, audience, err = clientmeta.ClientScopes(declared); err != nil {
			var me *clientmeta.MetadataError
			if errors.As(err, &me) {
				return nil, &ClientError{Description: "the client's metadata document is not usable here: " + me.Description}
			}
			return nil, err
		}
	} else {
		allowed = append([]string{scope.OpenID, scope.Profile, scope.Email}, scope.OperatorScopes()...)
		if len(declared) > 0 {
			allowed = slices.DeleteFunc(allowed, func(s string) bool { return !slices.Contains(declared, s) })
		}
	}
	appType := "native"
	for _, r := range doc.RedirectURIs {
		if strings.HasPrefix(r, "https://") {
			appType = "web"
		}
	}
	return &Client{
		Client: storage.Client{
			ClientID: doc.ClientID, Name: doc.ClientName, Audience: audience, Type: storage.ClientPublic,
			ApplicationType: appType, RedirectURIs: doc.RedirectURIs, Scopes: allowed, Source: storage.SourceCIMD, Reviewed: reviewed,
		},
		DocumentHost: doc.Host,
	}, nil
}

func clientErr(err error) error {
	var ce *cimd.Error
	if errors.As(err, &ce) {
		return &ClientError{Description: ce.Description}
	}
	return err
}
