package authserver

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lectern/lectern/authserver/throttle"
	"github.com/lectern/lectern/i18n"
	"github.com/lectern/lectern/limits"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/vocab"
)

// Pending authorization requests (issue 14): each is kept in the cache
// for pendingLifetime while the person signs in and consents, so an
// anonymous request must not be able to fill the cache every site
// shares (Redis runs with noeviction: full, it refuses every site's
// sessions and codes). Hence:
//   - state and nonce are at most maxStateBytes (authorize.go);
//   - a request is stored compactly (encodePending): no field names, the
//     PKCE challenge as its 32 bytes, no resource (always the site's);
//   - anonymous requests that store one are limited per IP (across sites)
//     and per site, signed-in people's per person and site
//     (pendingPerUser), and a site holds at most
//     limits.PendingAuthorizations at once.

// maxStateBytes bounds state and nonce. Real clients send 22 to 64
// characters; 512 leaves room for a signed state.
const maxStateBytes = 512

// pendingFormat is the first byte of a stored request: its encoding.
// pendingFormatStaleAuth adds StaleAuth; it is written only for a request
// that refused a session (prompt=login, max_age), so during a rolling
// upgrade the previous release reads every other request.
const (
	pendingFormat          = 1
	pendingFormatStaleAuth = 2
)

// encodePending is the stored form of ar: the format byte, the 32-byte
// challenge, then client_id, redirect_uri, scopes (space-separated),
// state, nonce and prompt, each as a uvarint length and its bytes, then
// (format 2) StaleAuth as a uvarint.
func encodePending(ar *authRequest) []byte {
	ch, err := base64.RawURLEncoding.DecodeString(ar.Challenge)
	if err != nil || len(ch) != 32 {
		ch = make([]byte, 32) // validated at authorize; cannot happen
	}
	scopes := strings.Join(ar.Scopes, " ")
	fields := []string{ar.ClientID, ar.RedirectURI, scopes, ar.State, ar.Nonce, ar.Prompt}
	n := 1 + 32
	for _, f := range fields {
		n += binary.MaxVarintLen16 + len(f)
	}
	format := byte(pendingFormat)
	if ar.StaleAuth > 0 {
		format = pendingFormatStaleAuth
		n += binary.MaxVarintLen64
	}
	b := make([]byte, 0, n)
	b = append(b, format)
	b = append(b, ch...)
	for _, f := range fields {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	if format == pendingFormatStaleAuth {
		b = binary.AppendUvarint(b, uint64(ar.StaleAuth))
	}
	return b
}

var errPendingFormat = errors.New("pending request: unknown encoding")

// decodePending reads what encodePending wrote; resource is the site's.
func decodePending(id, resource string, b []byte) (*authRequest, error) {
	if len(b) < 33 || (b[0] != pendingFormat && b[0] != pendingFormatStaleAuth) {
		return nil, errPendingFormat
	}
	format := b[0]
	ar := &authRequest{ID: id, Resource: resource, Challenge: base64.RawURLEncoding.EncodeToString(b[1:33])}
	b = b[33:]
	var scopes string
	for _, dst := range []*string{&ar.ClientID, &ar.RedirectURI, &scopes, &ar.State, &ar.Nonce, &ar.Prompt} {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return nil, errPendingFormat
		}
		*dst = string(b[k : k+int(n)])
		b = b[k+int(n):]
	}
	if scopes != "" {
		ar.Scopes = strings.Split(scopes, " ")
	}
	if format == pendingFormatStaleAuth {
		t, k := binary.Uvarint(b)
		if k <= 0 || t == 0 || t > math.MaxInt64 {
			return nil, errPendingFormat
		}
		ar.StaleAuth = int64(t)
		b = b[k:]
	}
	if len(b) != 0 {
		return nil, errPendingFormat
	}
	return ar, nil
}

func pendingKey(site tenant.ID, id string) string { return storage.CacheKey(site, "authreq", id) }

func (s *Server) savePending(ctx context.Context, site tenant.ID, ar *authRequest) error {
	if ar.ID == "" {
		ar.ID = randomToken()
	}
	return s.cache.Set(ctx, pendingKey(site, ar.ID), encodePending(ar), pendingLifetime)
}

// pending returns the authorization request id, or nil if it expired.
func (s *Server) pending(ctx context.Context, site tenant.ID, id string) (*authRequest, error) {
	if len(id) != 43 {
		return nil, nil
	}
	raw, err := s.cache.Get(ctx, pendingKey(site, id))
	if errors.Is(err, storage.ErrCacheMiss) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var resource string
	if st, ok := tenant.FromContext(ctx); ok {
		resource = st.Resource()
	}
	ar, err := decodePending(id, resource, raw)
	if err != nil {
		return nil, nil
	}
	return ar, nil
}

// pendingBucket is the width of the counters the per-site cap sums: a
// request is counted in the bucket of the minute it was stored, and a
// bucket lives as long as a request stored at its end.
const pendingBucket = time.Minute

// pendingBuckets is how many buckets can hold live requests.
const pendingBuckets = int(pendingLifetime/pendingBucket) + 1

// pendingPerUser bounds the new pending requests one signed-in person
// makes a site hold (consent pages, sign-ins again): that many at once,
// refilled at that many per pendingLifetime (one every 45 s), so one
// person holds at most about twice that (40) of the site's cap (2000 by
// default) however fast they ask. A person opening a few
// applications at once is far below it. It is fixed, not a limit of
// package limits: it is a share of pending_authorizations, not a rate an
// operator tunes (docs/decisions.md, "Capacity and limits"). /auth.md
// states it.
const pendingPerUser = vocab.PendingPerPerson

// busyStarting is the page's message when the limits per address and per
// site refuse a request.
const busyStarting = "Too many sign-ins are being started here right now."

// chargeAnonymous counts one request that may make the server spend on a
// stranger (store a pending request, fetch a client metadata document)
// against authorize_per_ip (per address across every site: what one
// client may make the cache hold does not grow with the number of sites)
// and authorize_per_site.
func (s *Server) chargeAnonymous(ctx context.Context, r *http.Request, site *tenant.Site) (ok bool, retry time.Duration, err error) {
	ip := throttle.Address(tenant.ClientIP(r))
	ok, retry, err = s.cache.Allow(ctx, storage.AddressKey(ip, "rl:authz"), s.rateOf(ctx, limits.AuthorizePerIP))
	if err == nil && ok {
		ok, retry, err = s.leased.Allow(ctx, storage.CacheKey(site.ID, "rl:authz", "site"), s.rateOf(ctx, limits.AuthorizePerSite))
	}
	return ok, retry, err
}

// busyError is a refusal by the anonymous limits before a client metadata
// document is fetched; the authorization endpoint answers it with
// busyPage.
type busyError struct{ retry time.Duration }

func (e *busyError) Error() string {
	return "authorization refused by the anonymous limits; retry in " + e.retry.String()
}

// admitAnonymous charges an anonymous request (chargeAnonymous) before it
// stores a pending request, or answers that it cannot (429 with
// Retry-After, or 503) and returns false.
func (s *Server) admitAnonymous(w http.ResponseWriter, r *http.Request, site *tenant.Site) bool {
	ok, retry, err := s.chargeAnonymous(r.Context(), r, site)
	if err != nil {
		s.unavailablePage(w, r, site, err)
		return false
	}
	if !ok {
		s.busyPage(w, r, site, retry, busyStarting)
		return false
	}
	return true
}

// holdPending stores a new pending request within the site's cap, and a
// signed-in person's (userID set) also within pendingPerUser; an
// anonymous one (userID "": the person signs in next) was charged to the
// limits per address and per site by the caller (admitAnonymous, or
// before its document was fetched). Or it answers that it cannot (429
// with Retry-After, or 503) and returns false. Requests already stored
// (ar.ID set: a sign-in continuing to consent) are stored again without
// being counted anew.
func (s *Server) holdPending(w http.ResponseWriter, r *http.Request, site *tenant.Site, ar *authRequest, userID string) bool {
	ctx := r.Context()
	if ar.ID != "" {
		if err := s.savePending(ctx, site.ID, ar); err != nil {
			s.unavailablePage(w, r, site, err)
			return false
		}
		return true
	}
	if userID != "" {
		// Per person and site: the cap is the site's, and one session
		// must not be able to use it all up (audit of issue 14, finding 4).
		ok, retry, err := s.cache.Allow(ctx, storage.CacheKey(site.ID, "rl:authz-user", userID),
			storage.Limit{Rate: pendingPerUser, Period: pendingLifetime, Burst: pendingPerUser})
		if err != nil {
			s.unavailablePage(w, r, site, err)
			return false
		}
		if !ok {
			s.logger.InfoContext(ctx, "pending authorizations of one person at their bound", "user", userID, "bound", pendingPerUser)
			s.busyPage(w, r, site, retry, i18n.T(i18n.Resolve(r, site.Locale), "authorize.busy_person", "Site", site.Name))
			return false
		}
	}
	ok, retry, err := s.countPending(ctx, site)
	if err != nil {
		s.unavailablePage(w, r, site, err)
		return false
	}
	if !ok {
		s.logger.WarnContext(ctx, "pending authorizations at their cap", "cap", s.limits.ForSite(site, limits.PendingAuthorizations))
		s.busyPage(w, r, site, retry, i18n.T(i18n.Resolve(r, site.Locale), "authorize.busy_site", "Site", site.Name))
		return false
	}
	if err := s.savePending(ctx, site.ID, ar); err != nil {
		s.unavailablePage(w, r, site, err)
		return false
	}
	return true
}

// countPending counts one more pending request of site unless the site
// holds its cap already: the sum of the per-minute counters that may
// still hold live requests (an upper bound: finished sign-ins are not
// subtracted). Concurrent requests may pass the cap by as many as run at
// once. When full, retry is when the oldest counter ends.
func (s *Server) countPending(ctx context.Context, site *tenant.Site) (ok bool, retry time.Duration, err error) {
	now := s.now()
	cur := now.Unix() / int64(pendingBucket/time.Second)
	keys := make([]string, pendingBuckets)
	for i := range keys {
		keys[i] = storage.CacheKey(site.ID, "authreq-n", strconv.FormatInt(cur-int64(i), 10))
	}
	vals, err := s.cache.GetMulti(ctx, keys...)
	if err != nil {
		return false, 0, err
	}
	sum, oldest := 0, -1
	for i, v := range vals {
		if n, err := strconv.Atoi(string(v)); err == nil && n > 0 {
			sum += n
			oldest = i
		}
	}
	if sum >= s.limits.ForSite(site, limits.PendingAuthorizations) {
		end := time.Unix((cur-int64(oldest)+1)*int64(pendingBucket/time.Second), 0).Add(pendingLifetime)
		return false, max(end.Sub(now), time.Second), nil
	}
	if _, err := s.cache.Incr(ctx, keys[0], pendingLifetime+2*pendingBucket); err != nil {
		return false, 0, err
	}
	return true, 0, nil
}

// busyPage tells the person that the site is too busy to start their
// sign-in: 429 with Retry-After.
func (s *Server) busyPage(w http.ResponseWriter, r *http.Request, site *tenant.Site, retry time.Duration, message string) {
	secs := max(1, int(retry.Seconds()+0.999))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	lang := i18n.Resolve(r, site.Locale)
	s.errorPage(w, r, site, http.StatusTooManyRequests, codeTemporarilyUnavailable, message,
		i18n.T(lang, "authorize.try_again_in", "Wait", i18n.Duration(lang, time.Duration(secs)*time.Second)))
}
