package authserver

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// Browser-session lifetimes (DESIGN §10).
const (
	SessionIdle     = 12 * time.Hour
	SessionAbsolute = 14 * 24 * time.Hour
	// sessionTouch is how often an active session's idle timer is renewed;
	// renewing on every request would cost a cache write each time.
	sessionTouch = 10 * time.Minute
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

	id string
}

// Sessions stores browser sessions and their cookies.
type Sessions struct {
	cache storage.Cache
	now   func() time.Time
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
func (ss *Sessions) Get(r *http.Request, site *tenant.Site) (*Session, error) {
	s, _, err := ss.GetWith(r, site, nil)
	return s, err
}

// GetWith is Get that also fetches, in the same cache round trip, the keys
// more(userID) names: the cookie says whose session it claims to be (the
// random part authenticates it; the stored session must name the same
// user), so per-user data can be read alongside. The values are nil when
// there is no session.
func (ss *Sessions) GetWith(r *http.Request, site *tenant.Site, more func(userID string) []string) (*Session, [][]byte, error) {
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
	if now.Sub(s.Created) > SessionAbsolute {
		_ = ss.cache.Delete(r.Context(), sessionKey(site.ID, id))
		return nil, nil, nil
	}
	s.id = id
	if now.Sub(s.Touched) > sessionTouch {
		s.Touched = now
		_ = ss.save(r.Context(), &s) // best effort: the session is valid either way
	}
	return &s, vals[1:], nil
}

// Create starts a session for user and sets its cookie.
func (ss *Sessions) Create(w http.ResponseWriter, r *http.Request, site *tenant.Site, userID string) (*Session, error) {
	now := ss.now()
	s := &Session{SiteID: site.ID, UserID: userID, AuthTime: now, Created: now, Touched: now, CSRF: randomToken(), id: randomToken()}
	if err := ss.save(r.Context(), s); err != nil {
		return nil, err
	}
	http.SetCookie(w, &http.Cookie{
		Name: cookieName(site, "lectern_session"), Value: s.id + "." + userID, Path: "/",
		HttpOnly: true, Secure: site.Secure(), SameSite: http.SameSiteLaxMode,
	})
	return s, nil
}

// Destroy ends the request's session, if any, and clears its cookie.
func (ss *Sessions) Destroy(w http.ResponseWriter, r *http.Request, site *tenant.Site) error {
	name := cookieName(site, "lectern_session")
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: site.Secure(), SameSite: http.SameSiteLaxMode})
	c, err := r.Cookie(name)
	if err != nil {
		return nil
	}
	id, _, _ := strings.Cut(c.Value, ".")
	return ss.cache.Delete(r.Context(), sessionKey(site.ID, id))
}

func (ss *Sessions) save(ctx context.Context, s *Session) error {
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return ss.cache.Set(ctx, sessionKey(s.SiteID, s.id), b, SessionIdle)
}

// CSRFToken returns the anti-forgery token for forms of r's browser at
// site, setting its cookie if the browser has none yet. Signed-in pages use
// the session's token; the sign-in page, shown before a session exists, uses
// a double-submit cookie, which also stops login CSRF.
func CSRFToken(w http.ResponseWriter, r *http.Request, site *tenant.Site, sess *Session) string {
	if sess != nil {
		return sess.CSRF
	}
	name := cookieName(site, "lectern_csrf")
	if c, err := r.Cookie(name); err == nil && len(c.Value) == 43 {
		return c.Value
	}
	tok := randomToken()
	http.SetCookie(w, &http.Cookie{Name: name, Value: tok, Path: "/", HttpOnly: true, Secure: site.Secure(), SameSite: http.SameSiteLaxMode})
	return tok
}

// CheckCSRF verifies the csrf_token field of a submitted form.
func CheckCSRF(r *http.Request, site *tenant.Site, sess *Session) bool {
	got := r.PostFormValue("csrf_token")
	if got == "" {
		return false
	}
	want := ""
	if sess != nil {
		want = sess.CSRF
	} else if c, err := r.Cookie(cookieName(site, "lectern_csrf")); err == nil {
		want = c.Value
	}
	return want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// randomToken returns 256 random bits, base64url (43 characters).
func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// randomID returns 128 random bits, base64url (22 characters).
func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}
