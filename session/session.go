package session

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	json "github.com/segmentio/encoding/json"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// Browser-session lifetimes (DESIGN §10).
const (
	Idle     = 12 * time.Hour
	Absolute = 14 * 24 * time.Hour
	// touchEvery is how often an active session's idle timer is renewed;
	// renewing on every request would cost a cache write each time.
	touchEvery = 10 * time.Minute
)

// Session is a signed-in person at one site. Sessions live in the cache
// (DESIGN §3); the cookie holds a 256-bit random ID, the cache only its hash.
type Session struct {
	SiteID   tenant.ID `json:"site"`
	UserID   string    `json:"user"`
	AuthTime time.Time `json:"auth_time"`
	Created  time.Time `json:"created"`
	Touched  time.Time `json:"touched"`
	// CSRF is the anti-forgery token of forms shown to this session.
	CSRF string `json:"csrf"`
	// AMR are the ways the person proved who they are (RFC 8176: pwd,
	// otp, hwk, mfa); the id_token carries them.
	AMR []string `json:"amr,omitempty"`
	// UserAgent and IP are the browser's at sign-in, for the account
	// page's list of sessions.
	UserAgent string `json:"ua,omitempty"`
	IP        string `json:"ip,omitempty"`

	id string
}

// Store keeps browser sessions in the cache and sets their cookies.
type Store struct {
	cache storage.Cache
	now   func() time.Time
	max   int // sessions per account (SetMax)
}

// NewStore returns a Store over cache. now is the clock (nil: time.Now).
func NewStore(cache storage.Cache, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{cache: cache, now: now, max: MaxPerUser}
}

// cookieName is per site: cookies ignore ports, so two sites on one host
// (localhost:8080, localhost:9090) must not overwrite each other's cookie.
// On https origins the __Host- prefix pins it to the exact origin.
func cookieName(site *tenant.Site, base string) string {
	name := base + "_" + strconv.FormatInt(int64(site.ID), 10)
	if site.Secure() {
		return "__Host-" + name
	}
	return name
}

func sessionKey(site tenant.ID, id string) string {
	sum := sha256.Sum256([]byte(id))
	return storage.CacheKey(site, "sess", base64.RawURLEncoding.EncodeToString(sum[:]))
}

// Get returns the request's session at site, or nil without one. A storage
// error is returned as such (the caller answers 503, not "signed out").
func (ss *Store) Get(r *http.Request, site *tenant.Site) (*Session, error) {
	s, _, err := ss.GetWith(r, site, nil)
	return s, err
}

// GetWith is Get that also fetches, in the same cache round trip, the keys
// more(userID) names: the cookie says whose session it claims to be (the
// random part authenticates it; the stored session must name the same
// user), so per-user data can be read alongside. The values are nil when
// there is no session.
func (ss *Store) GetWith(r *http.Request, site *tenant.Site, more func(userID string) []string) (*Session, [][]byte, error) {
	c, err := r.Cookie(cookieName(site, "lectern_session"))
	if err != nil {
		return nil, nil, nil
	}
	id, userID, ok := strings.Cut(c.Value, ".")
	if !ok || len(id) != 43 || userID == "" || len(userID) > 64 {
		return nil, nil, nil
	}
	keys := []string{sessionKey(site.ID, id)}
	if more != nil {
		keys = append(keys, more(userID)...)
	}
	vals, err := ss.cache.GetMulti(r.Context(), keys...)
	if err != nil {
		return nil, nil, err
	}
	if vals[0] == nil {
		return nil, nil, nil
	}
	var s Session
	if err := json.Unmarshal(vals[0], &s); err != nil || s.SiteID != site.ID || s.UserID != userID {
		return nil, nil, nil
	}
	now := ss.now()
	if now.Sub(s.Created) > Absolute {
		_ = ss.cache.Delete(r.Context(), sessionKey(site.ID, id))
		return nil, nil, nil
	}
	s.id = id
	if now.Sub(s.Touched) > touchEvery {
		s.Touched = now
		_ = ss.save(r.Context(), &s) // best effort: the session is valid either way
	}
	return &s, vals[1:], nil
}

// indexKey names the set of a user's sessions at every site (their cache
// keys). Accounts are platform-wide, so the index is too: its hash tag is
// the user's, not a site's.
func indexKey(userID string) string {
	sum := sha256.Sum256([]byte(userID))
	return "{u" + base64.RawURLEncoding.EncodeToString(sum[:12]) + "}:sessions"
}

// Create starts a session for user, who signed in with a password, and
// sets its cookie.
func (ss *Store) Create(w http.ResponseWriter, r *http.Request, site *tenant.Site, userID string) (*Session, error) {
	return ss.CreateWith(w, r, site, userID, []string{AMRPassword})
}

// CreateWith starts a session for user, who signed in by amr, and sets
// its cookie. The session is recorded in the user's index first, so that
// no session exists that EndAll cannot find; beyond MaxPerUser sessions
// the oldest are ended.
func (ss *Store) CreateWith(w http.ResponseWriter, r *http.Request, site *tenant.Site, userID string, amr []string) (*Session, error) {
	now := ss.now()
	s := &Session{SiteID: site.ID, UserID: userID, AuthTime: now, Created: now, Touched: now, CSRF: randomToken(), id: randomToken(),
		AMR: amr, UserAgent: truncate(r.UserAgent(), 256), IP: tenant.ClientIP(r)}
	if err := ss.cache.SetAdd(r.Context(), indexKey(userID), Absolute, sessionKey(site.ID, s.id)); err != nil {
		return nil, err
	}
	if err := ss.save(r.Context(), s); err != nil {
		return nil, err
	}
	ss.bound(r.Context(), userID)
	http.SetCookie(w, &http.Cookie{
		Name: cookieName(site, "lectern_session"), Value: s.id + "." + userID, Path: "/",
		HttpOnly: true, Secure: site.Secure(), SameSite: http.SameSiteLaxMode,
	})
	return s, nil
}

// Destroy ends the request's session, if any, and clears its cookie.
func (ss *Store) Destroy(w http.ResponseWriter, r *http.Request, site *tenant.Site) error {
	name := cookieName(site, "lectern_session")
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: site.Secure(), SameSite: http.SameSiteLaxMode})
	c, err := r.Cookie(name)
	if err != nil {
		return nil
	}
	id, userID, _ := strings.Cut(c.Value, ".")
	key := sessionKey(site.ID, id)
	if err := ss.cache.Delete(r.Context(), key); err != nil {
		return err
	}
	if userID != "" && len(userID) <= 64 {
		_ = ss.cache.SetRemove(r.Context(), indexKey(userID), key) // the index only points at it
	}
	return nil
}

// EndAll ends every browser session of the user at every site (after a
// password reset). A session being created at this very moment may
// survive it; one created afterwards is unaffected.
func (ss *Store) EndAll(ctx context.Context, userID string) error {
	idx := indexKey(userID)
	keys, err := ss.cache.SetMembers(ctx, idx)
	if err != nil {
		return err
	}
	// Session keys of different sites live in different cluster slots:
	// one delete each.
	for _, k := range keys {
		if err := ss.cache.Delete(ctx, k); err != nil {
			return err
		}
	}
	return ss.cache.SetRemove(ctx, idx, keys...)
}

func (ss *Store) save(ctx context.Context, s *Session) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return ss.cache.Set(ctx, sessionKey(s.SiteID, s.id), b, Idle)
}

// randomToken returns 256 random bits, base64url (43 characters).
func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}
