package integration

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern/lectern/authserver/password"
	"github.com/lectern/lectern/internal/oauthtest"
	"github.com/lectern/lectern/internal/server"
	"github.com/lectern/lectern/limits"
)

// forwardedFor makes every request of b say, through the trusted proxy,
// that it comes from ip.
func forwardedFor(b *oauthtest.Browser, ip string) {
	next := b.Client.Transport
	b.Client.Transport = roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.Header.Set("X-Forwarded-For", ip)
		return next.RoundTrip(r)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// turnSignUpOn opens sign-up at origin through the admin API and waits
// until the site serves it.
func turnSignUpOn(t *testing.T, ts *testServer, origin string) {
	t.Helper()
	write := admOwnerToken(t, ts, origin, "school:write")
	admDo(t, ts, http.MethodPatch, origin, "/school", write, map[string]any{"accounts": map[string]any{"signUp": true}}).want(t, 200, "PATCH /school signUp")
	eventually(t, 10*time.Second, func() error {
		if p := browserAt(t, ts, origin).get("/signup"); p.Status != http.StatusOK {
			return errStatus(p.Status)
		}
		return nil
	})
}

// signUpFloods fills the sign-up form of origin n times, each browser from
// its own address, and posts them all at once.
func signUpFlood(t *testing.T, ts *testServer, origin string, n int) []*oauthtest.Page {
	t.Helper()
	type ready struct {
		b *oauthtest.Browser
		v url.Values
	}
	flood := make([]ready, n)
	for i := range flood {
		b := browserFromIP(ts, nextSourceIP())
		page, err := b.Get(origin + "/signup")
		if err != nil {
			t.Fatal(err)
		}
		f, err := oauthtest.ParseForm(page.Body, "signup-form")
		if err != nil {
			t.Fatal(err)
		}
		f.Values.Set("name", "Flood "+strconv.Itoa(i))
		f.Values.Set("email", uniqueEmail("flood"+strconv.Itoa(i)))
		f.Values.Set("password", "flood-password-"+strconv.Itoa(i))
		flood[i] = ready{b, f.Values}
	}
	pages := make([]*oauthtest.Page, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, f := range flood {
		wg.Go(func() {
			<-start
			p, err := f.b.PostForm(origin+"/signup", f.v)
			if err != nil {
				t.Error(err)
				return
			}
			pages[i] = p
		})
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return pages
}

// A new password is the same argon2id work as a sign-in's check, and a
// sign-up is anonymous: its hash waits for the password gate (503 with
// Retry-After beyond the queue) and spends the site's check budget (429),
// as a sign-in does. Before, every sign-up hashed at once, outside both.
// A refusal shed by the gate is logged as a warning, not an error.
func TestSignUpsShareThePasswordChecks(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, &serverOptions{
			configure: func(c *server.Config) {
				c.Limits.Defaults = map[limits.Name]int{limits.LoginChecksPerSite: 1000}
				c.PasswordChecks, c.PasswordQueue = 1, 1
			},
			// Full-strength hashes, so that they overlap.
			passwords: &password.Default,
		})
		academy := ts.academy()
		turnSignUpOn(t, ts, academy)

		// The gate: one hash at a time, one waiting.
		busy := 0
		for _, p := range signUpFlood(t, ts, academy, 8) {
			switch p.Status {
			case http.StatusOK:
			case http.StatusServiceUnavailable:
				if p.Header.Get("Retry-After") == "" || !hasText(p, "Too many passwords are being processed right now") || !hasText(p, `id="signup-form"`) {
					t.Fatalf("a busy sign-up without Retry-After, explanation or its form:\n%s", webExcerpt(p.Body))
				}
				busy++
			default:
				t.Fatalf("flood sign-up: %d\n%s", p.Status, webExcerpt(p.Body))
			}
		}
		if busy == 0 {
			t.Fatalf("8 simultaneous sign-ups with one password check at a time and a queue of 1: none was refused; sign-ups bypass the password gate")
		}
		// The access log: the gate's refusals are WARN, not ERROR.
		warned := 0
		for _, line := range strings.Split(ts.logs.String(), "\n") {
			var rec struct {
				Level, Msg, Path string
				Status           int
			}
			if json.Unmarshal([]byte(line), &rec) != nil || rec.Msg != "request" || rec.Path != "/signup" || rec.Status != http.StatusServiceUnavailable {
				continue
			}
			if rec.Level != "WARN" {
				t.Fatalf("the password gate's 503 is logged at %s, want WARN: %s", rec.Level, line)
			}
			warned++
		}
		if warned != busy {
			t.Fatalf("%d refused sign-ups, %d WARN access-log lines", busy, warned)
		}

		// The site's budget: one check a second.
		write := admOwnerToken(t, ts, academy, "school:write")
		admDo(t, ts, http.MethodPut, academy, "/limits", write, map[string]any{"overrides": map[string]int{string(limits.LoginChecksPerSite): 1}}).want(t, 200, "PUT /limits")
		time.Sleep(1100 * time.Millisecond) // a full bucket: one check
		limited := 0
		for _, p := range signUpFlood(t, ts, academy, 4) {
			switch p.Status {
			case http.StatusOK, http.StatusServiceUnavailable:
			case http.StatusTooManyRequests:
				if p.Header.Get("Retry-After") == "" || !hasText(p, "Too many passwords are being set at this site right now") {
					t.Fatalf("a limited sign-up without Retry-After or explanation:\n%s", webExcerpt(p.Body))
				}
				limited++
			default:
				t.Fatalf("sign-up beyond the budget: %d\n%s", p.Status, webExcerpt(p.Body))
			}
		}
		if limited == 0 {
			t.Fatalf("4 simultaneous sign-ups with login_checks_per_site=1: none was refused; sign-ups bypass the site's check budget")
		}
	})
}

// The account forms' per-IP limit (20 an hour per form) counts an IPv6
// address by its /64, as every per-IP limit does: one subscriber has a
// whole /64. Before, each address of it counted apart.
func TestAccountFormsCountIPv6By64(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, &serverOptions{configure: func(c *server.Config) { c.TrustedProxies = "127.0.0.1/32" }})
	academy := ts.academy()
	var last *oauthtest.Page
	for i := 1; i <= 21; i++ {
		b := oauthtest.NewBrowser(ts.addr)
		forwardedFor(b, "2001:db8:1:2::"+strconv.FormatInt(int64(i), 16))
		page, err := b.Get(academy + "/password/forgot")
		if err != nil {
			t.Fatal(err)
		}
		f, err := oauthtest.ParseForm(page.Body, "forgot-form")
		if err != nil {
			t.Fatalf("%v\n%s", err, webExcerpt(page.Body))
		}
		f.Values.Set("email", uniqueEmail("nobody"+strconv.Itoa(i)))
		if last, err = b.PostForm(academy+"/password/forgot", f.Values); err != nil {
			t.Fatal(err)
		}
		if i <= 20 && last.Status != http.StatusOK {
			t.Fatalf("request %d from the /64: %d\n%s", i, last.Status, webExcerpt(last.Body))
		}
	}
	if last.Status != http.StatusTooManyRequests || last.Header.Get("Retry-After") == "" {
		t.Fatalf("the 21st request from one /64 within the hour: %d, want 429 with Retry-After", last.Status)
	}
	// Another /64 is another subscriber.
	b := oauthtest.NewBrowser(ts.addr)
	forwardedFor(b, "2001:db8:1:3::1")
	page, err := b.Get(academy + "/password/forgot")
	if err != nil {
		t.Fatal(err)
	}
	f, err := oauthtest.ParseForm(page.Body, "forgot-form")
	if err != nil {
		t.Fatal(err)
	}
	f.Values.Set("email", uniqueEmail("other64"))
	if p, err := b.PostForm(academy+"/password/forgot", f.Values); err != nil || p.Status != http.StatusOK {
		t.Fatalf("a request from another /64: %v %v", p, err)
	}
}
