package authserver

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/lectern/lectern/session"
)

// prompt is a space-delimited list (OpenID Connect Core §3.1.2.1): login
// and consent act together, select_account is a sign-in, none stands
// alone, and what is not known is refused.
func TestParsePrompt(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     prompts
		pending  string
		invalid  bool
	}{
		{name: "absent", in: ""},
		{name: "none", in: "none", want: prompts{none: true}, pending: "none"},
		{name: "login", in: "login", want: prompts{login: true}},
		{name: "consent", in: "consent", want: prompts{consent: true}, pending: "consent"},
		{name: "login consent", in: "login consent", want: prompts{login: true, consent: true}, pending: "consent"},
		{name: "consent login, repeated", in: "consent login login", want: prompts{login: true, consent: true}, pending: "consent"},
		{name: "select_account", in: "select_account", want: prompts{login: true}},
		{name: "none with login", in: "none login", invalid: true},
		{name: "consent with none", in: "consent none", invalid: true},
		{name: "unknown", in: "create", invalid: true},
		{name: "case matters", in: "Login", invalid: true},
		{name: "a known and an unknown", in: "login everything", invalid: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, desc := parsePrompt(c.in)
			if (desc != "") != c.invalid {
				t.Fatalf("parsePrompt(%q): description %q; want invalid=%v", c.in, desc, c.invalid)
			}
			if c.invalid {
				return
			}
			if got != c.want || got.pending() != c.pending {
				t.Errorf("parsePrompt(%q) = %+v (pending %q); want %+v (pending %q)", c.in, got, got.pending(), c.want, c.pending)
			}
		})
	}
}

func TestParseMaxAge(t *testing.T) {
	for _, c := range []struct {
		in      string
		present bool
		want    int64
		invalid bool
	}{
		{in: "", present: false, want: -1},
		{in: "0", present: true, want: 0},
		{in: "3600", present: true, want: 3600},
		{in: "007", present: true, want: 7},
		{in: "99999999999999999999", present: true, want: maxMaxAge},
		{in: "9223372036854775807", present: true, want: maxMaxAge},
		{in: "3153600000", present: true, want: maxMaxAge},
		{in: "", present: true, invalid: true},
		{in: "-1", present: true, invalid: true},
		{in: "+5", present: true, invalid: true},
		{in: "1.5", present: true, invalid: true},
		{in: " 5", present: true, invalid: true},
		{in: "1e3", present: true, invalid: true},
		{in: strings.Repeat("9", 65), present: true, invalid: true},
	} {
		got, desc := parseMaxAge(c.in, c.present)
		if (desc != "") != c.invalid || (!c.invalid && got != c.want) {
			t.Errorf("parseMaxAge(%q, %v) = %d, %q; want %d (invalid=%v)", c.in, c.present, got, desc, c.want, c.invalid)
		}
	}
}

// max_age counts the time since the sign-in to the nanosecond: a session
// 1.1 s old is older than max_age=1, though its auth_time (seconds) may
// be the same second's.
func TestTooOld(t *testing.T) {
	signedIn := time.Unix(1_800_000_000, 900_000_000)
	sess := &session.Session{AuthTime: signedIn}
	for _, c := range []struct {
		maxAge  int64
		elapsed time.Duration
		want    bool
	}{
		{-1, 1000 * time.Hour, false},
		{0, time.Nanosecond, true},
		{0, 0, false},
		{1, time.Second, false},
		{1, 1100 * time.Millisecond, true},
		{3600, 59 * time.Minute, false},
		{3600, 61 * time.Minute, true},
		{maxMaxAge, 90 * 365 * 24 * time.Hour, false},
	} {
		if got := tooOld(sess, c.maxAge, signedIn.Add(c.elapsed)); got != c.want {
			t.Errorf("max_age %d, %s after the sign-in: %v; want %v", c.maxAge, c.elapsed, got, c.want)
		}
	}
}

// A request that refused a session (prompt=login, max_age) is continued
// only by a session signed in after that one.
func TestContinues(t *testing.T) {
	refused := &session.Session{AuthTime: time.Unix(1_800_000_000, 5)}
	ar := &authRequest{StaleAuth: staleAuth(refused)}
	for _, c := range []struct {
		name string
		ar   *authRequest
		sess *session.Session
		want bool
	}{
		{"nothing refused", &authRequest{}, refused, true},
		{"the refused session", ar, refused, false},
		{"an older session", ar, &session.Session{AuthTime: refused.AuthTime.Add(-time.Hour)}, false},
		{"signed in a nanosecond later", ar, &session.Session{AuthTime: refused.AuthTime.Add(time.Nanosecond)}, true},
		{"signed in again", ar, &session.Session{AuthTime: refused.AuthTime.Add(time.Minute)}, true},
	} {
		if got := continues(c.sess, c.ar); got != c.want {
			t.Errorf("%s: %v; want %v", c.name, got, c.want)
		}
	}
	if got := staleAuth(&session.Session{}); got <= 0 {
		t.Errorf("staleAuth of a session without an auth time: %d; want a positive mark", got)
	}
}

// A pending request keeps StaleAuth; one without it is stored as before,
// in the format the previous release reads.
func TestPendingEncodingKeepsStaleAuth(t *testing.T) {
	base := authRequest{ID: strings.Repeat("i", 43), ClientID: "demo-member-app", RedirectURI: "http://127.0.0.1:53682/callback",
		Scopes: []string{"openid", "account:read"}, State: "s", Nonce: "n", Challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
		Resource: "https://academy.example", Prompt: "consent"}
	for _, stale := range []int64{0, 1_800_000_000_123_456_789} {
		ar := base
		ar.StaleAuth = stale
		raw := encodePending(&ar)
		wantFormat := byte(pendingFormat)
		if stale != 0 {
			wantFormat = pendingFormatStaleAuth
		}
		if raw[0] != wantFormat {
			t.Errorf("StaleAuth %d: format %d; want %d", stale, raw[0], wantFormat)
		}
		got, err := decodePending(ar.ID, ar.Resource, raw)
		if err != nil {
			t.Fatalf("StaleAuth %d: %v", stale, err)
		}
		if diff := cmp.Diff(&ar, got); diff != "" {
			t.Errorf("StaleAuth %d: round trip (-want +got):\n%s", stale, diff)
		}
		if _, err := decodePending(ar.ID, ar.Resource, append(raw, 0)); err == nil {
			t.Errorf("StaleAuth %d: trailing bytes accepted", stale)
		}
	}
}

// The authorization request comes from a GET's query or a POST's form
// body (OpenID Connect Core §3.1.2.1), never from both.
func TestAuthorizeParams(t *testing.T) {
	form := url.Values{"client_id": {"demo-member-app"}, "scope": {"openid email"}}.Encode()
	for _, c := range []struct {
		name, method, target, contentType, body string
		want                                    url.Values
	}{
		{name: "GET", method: http.MethodGet, target: "/oauth/authorize?" + form, want: url.Values{"client_id": {"demo-member-app"}, "scope": {"openid email"}}},
		{name: "POST", method: http.MethodPost, target: "/oauth/authorize", contentType: "application/x-www-form-urlencoded", body: form,
			want: url.Values{"client_id": {"demo-member-app"}, "scope": {"openid email"}}},
		{name: "POST with a charset", method: http.MethodPost, target: "/oauth/authorize", contentType: "application/x-www-form-urlencoded; charset=utf-8", body: form,
			want: url.Values{"client_id": {"demo-member-app"}, "scope": {"openid email"}}},
		{name: "POST with a query", method: http.MethodPost, target: "/oauth/authorize?client_id=other", contentType: "application/x-www-form-urlencoded", body: form},
		{name: "POST as JSON", method: http.MethodPost, target: "/oauth/authorize", contentType: "application/json", body: `{"client_id":"demo-member-app"}`},
		{name: "POST without a type", method: http.MethodPost, target: "/oauth/authorize", body: form},
		{name: "POST too large", method: http.MethodPost, target: "/oauth/authorize", contentType: "application/x-www-form-urlencoded", body: "state=" + strings.Repeat("a", maxAuthorizeBody)},
		{name: "POST malformed", method: http.MethodPost, target: "/oauth/authorize", contentType: "application/x-www-form-urlencoded", body: "client_id=%ZZ"},
		{name: "GET malformed", method: http.MethodGet, target: "/oauth/authorize?client_id=%ZZ"},
		{name: "PUT", method: http.MethodPut, target: "/oauth/authorize", contentType: "application/x-www-form-urlencoded", body: form},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(c.method, c.target, strings.NewReader(c.body))
			if c.contentType != "" {
				r.Header.Set("Content-Type", c.contentType)
			}
			got, problem := authorizeParams(httptest.NewRecorder(), r)
			if c.want == nil {
				if problem == "" {
					t.Fatalf("accepted as %v; want it refused", got)
				}
				return
			}
			if problem != "" {
				t.Fatalf("refused: %s", problem)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("parameters (-want +got):\n%s", diff)
			}
		})
	}
}
