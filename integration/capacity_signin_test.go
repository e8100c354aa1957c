package integration

import (
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/oauthtest"
	"github.com/lectern/lectern/internal/server"
	"github.com/lectern/lectern/limits"
)

// Sign-in throttling (issue 14 part B, item 3). Accounts are
// platform-wide, so their failures count at every site; a stranger's
// failures block the stranger, not the owner.

// Failures at one site count at the others: ten wrong passwords at Demo
// Academy leave the guesser no further guesses at Open School (before:
// ten more per site). An address without an account is answered the same.
func TestSignInFailuresCountAcrossSites(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		guesser := nextSourceIP()
		for _, email := range []string{demo.StudentEmail, "nobody-here@demo.test"} {
			for i := range 10 {
				if p := signInFrom(t, ts, ts.academy(), guesser, email, "wrong-"+strconv.Itoa(i)); p.Status != http.StatusUnauthorized {
					t.Fatalf("%s, wrong password %d: status %d", email, i+1, p.Status)
				}
			}
			p := signInFrom(t, ts, ts.open(), guesser, email, "wrong-again")
			if p.Status != http.StatusTooManyRequests || p.Header.Get("Retry-After") == "" {
				t.Fatalf("%s, 11th wrong password, at the other site: status %d Retry-After %q; want 429: failures count at every site",
					email, p.Status, p.Header.Get("Retry-After"))
			}
			if !hasText(p, "Too many failed sign-in attempts. Please wait 15 minutes") {
				t.Fatalf("%s: the refusal does not say what to do:\n%s", email, p.Body)
			}
			if p := signInFrom(t, ts, ts.open(), guesser, email, "and again"); p.Status != http.StatusTooManyRequests {
				t.Fatalf("%s, 12th: %d", email, p.Status)
			}
		}
		// Audited once per pair and window, not per refused attempt (each
		// would be a database write an attacker gets for free).
		if n := auditCount(t, ts, demo.OpenSlug, "login.throttled"); n != 2 {
			t.Errorf("login.throttled events at Open School: %d, want 2", n)
		}
	})
}

// Ten wrong passwords from a stranger's address do not lock the owner
// out: from another address the right password still signs in, at either
// site, while the stranger stays blocked.
func TestSignInStrangerCannotLockOwnerOut(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		stranger, owner := nextSourceIP(), nextSourceIP()
		for i := range 10 {
			signInFrom(t, ts, ts.academy(), stranger, demo.StudentEmail, "guess-"+strconv.Itoa(i))
		}
		if p := signInFrom(t, ts, ts.academy(), stranger, demo.StudentEmail, demo.StudentPassword); p.Status != http.StatusTooManyRequests {
			t.Fatalf("the stranger's address after 10 failures, even with the right password: %d, want 429", p.Status)
		}
		for _, origin := range []string{ts.academy(), ts.open()} {
			if p := signInFrom(t, ts, origin, owner, demo.StudentEmail, demo.StudentPassword); p.Status != http.StatusSeeOther {
				t.Fatalf("the owner from their own address at %s: %d, want 303 (signed in)\n%s", origin, p.Status, p.Body)
			}
		}
	})
}

// One address failing across many accounts is throttled, across sites:
// password spraying is stopped although no single account reaches its
// limit.
func TestSignInSprayFromOneAddressThrottled(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, withLimits(map[limits.Name]int{limits.LoginFailuresPerIP: 12}))
		sprayer := nextSourceIP()
		accounts := []string{demo.StudentEmail, demo.OwnerEmail, demo.LecturerEmail, demo.OutsiderEmail}
		for i := range 12 {
			origin := ts.academy()
			if i%2 == 1 {
				origin = ts.open()
			}
			if p := signInFrom(t, ts, origin, sprayer, accounts[i%4], "spray-"+strconv.Itoa(i)); p.Status != http.StatusUnauthorized {
				t.Fatalf("attempt %d: %d", i+1, p.Status)
			}
		}
		p := signInFrom(t, ts, ts.academy(), sprayer, demo.StudentEmail, demo.StudentPassword)
		if p.Status != http.StatusTooManyRequests || !hasText(p, "from your network") {
			t.Fatalf("13th attempt from the spraying address: %d, want 429 naming the network\n%s", p.Status, p.Body)
		}
		if p := signInFrom(t, ts, ts.academy(), nextSourceIP(), demo.StudentEmail, demo.StudentPassword); p.Status != http.StatusSeeOther {
			t.Fatalf("another address: %d, want 303", p.Status)
		}
	})
}

// Beyond the account-wide ceiling guessing slows down (each address must
// wait between attempts) but nobody is locked out: the owner's first
// attempt from their address signs in.
func TestSignInAccountCeilingSlowsWithoutLockout(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, withLimits(map[limits.Name]int{limits.LoginFailuresPerAccount: 20}))
		for range 2 {
			ip := nextSourceIP()
			for i := range 10 {
				if p := signInFrom(t, ts, ts.academy(), ip, demo.StudentEmail, "x"+strconv.Itoa(i)); p.Status != http.StatusUnauthorized {
					t.Fatalf("failure %d from %s: %d", i+1, ip, p.Status)
				}
			}
		}
		guesser := nextSourceIP()
		if p := signInFrom(t, ts, ts.open(), guesser, demo.StudentEmail, "another"); p.Status != http.StatusUnauthorized {
			t.Fatalf("a new address's first attempt beyond the ceiling: %d, want it checked (401)", p.Status)
		}
		p := signInFrom(t, ts, ts.open(), guesser, demo.StudentEmail, "and another")
		retry, _ := strconv.Atoi(p.Header.Get("Retry-After"))
		if p.Status != http.StatusTooManyRequests || retry < 30 || retry > 60 || !hasText(p, "each device must wait") {
			t.Fatalf("its second attempt: %d Retry-After %q; want 429 with a wait of about a minute\n%s", p.Status, p.Header.Get("Retry-After"), p.Body)
		}
		if p := signInFrom(t, ts, ts.academy(), nextSourceIP(), demo.StudentEmail, demo.StudentPassword); p.Status != http.StatusSeeOther {
			t.Fatalf("the owner beyond the ceiling, first attempt from their address: %d, want 303 (no lockout)\n%s", p.Status, p.Body)
		}
	})
}

// Concurrent wrong passwords for one account from one address: the
// attempt is counted before the password is checked, so at most the limit
// (10) are checked and the rest are refused without hashing (before: all
// 40 were checked and answered 401).
func TestSignInConcurrentGuessesStopAtTheLimit(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, withLimits(map[limits.Name]int{limits.LoginChecksPerSite: 1000},
			func(c *server.Config) { c.PasswordChecks, c.PasswordQueue = 64, 64 }))
		ip := nextSourceIP()
		const n = 40
		type ready struct {
			b *oauthtest.Browser
			v map[string][]string
		}
		forms := make([]ready, n)
		for i := range forms {
			b, v := signInForm(t, ts, ts.academy(), ip, demo.StudentEmail, "concurrent-"+strconv.Itoa(i))
			forms[i] = ready{b, v}
		}
		statuses := make([]int, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, f := range forms {
			wg.Go(func() {
				<-start
				p, err := f.b.PostForm(ts.academy()+"/login", f.v)
				if err != nil {
					t.Error(err)
					return
				}
				statuses[i] = p.Status
			})
		}
		close(start)
		wg.Wait()
		count := map[int]int{}
		for _, s := range statuses {
			count[s]++
		}
		if count[http.StatusUnauthorized] > 10 || count[http.StatusUnauthorized] == 0 || count[http.StatusUnauthorized]+count[http.StatusTooManyRequests] != n {
			t.Fatalf("40 concurrent wrong passwords: %v; want at most 10 checked (401), the rest 429", count)
		}
		if got := auditCount(t, ts, demo.AcademySlug, "login.failed"); got > 10 {
			t.Fatalf("%d passwords were checked and failed; the limit is 10", got)
		}
	})
}

// A sign-in flood at one site waits in a short queue of its own for the
// password checks (one at a time here) and is refused beyond it (503,
// Retry-After), while a sign-in at another site in the middle of it goes
// through (before: every check ran at once, 40 at a time).
func TestSignInFloodLeavesOtherSitesServed(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, withLimits(map[limits.Name]int{limits.LoginChecksPerSite: 1000},
			func(c *server.Config) { c.PasswordChecks, c.PasswordQueue = 1, 2 }))
		const n = 16
		type ready struct {
			b *oauthtest.Browser
			v map[string][]string
		}
		flood := make([]ready, n)
		for i := range flood {
			// Addresses without accounts: each costs a full-strength check.
			b, v := signInForm(t, ts, ts.academy(), nextSourceIP(), "flood-"+strconv.Itoa(i)+"@example.test", "password")
			flood[i] = ready{b, v}
		}
		quiet, quietForm := signInForm(t, ts, ts.open(), nextSourceIP(), demo.StudentEmail, demo.StudentPassword)
		statuses := make([]*oauthtest.Page, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, f := range flood {
			wg.Go(func() {
				<-start
				p, err := f.b.PostForm(ts.academy()+"/login", f.v)
				if err != nil {
					t.Error(err)
					return
				}
				statuses[i] = p
			})
		}
		var quietPage *oauthtest.Page
		wg.Go(func() {
			<-start
			p, err := quiet.PostForm(ts.open()+"/login", quietForm)
			if err != nil {
				t.Error(err)
				return
			}
			quietPage = p
		})
		close(start)
		wg.Wait()
		if t.Failed() {
			return
		}
		busy := 0
		for _, p := range statuses {
			switch p.Status {
			case http.StatusUnauthorized:
			case http.StatusServiceUnavailable:
				if p.Header.Get("Retry-After") == "" || !hasText(p, "Too many sign-ins are being checked right now") {
					t.Fatalf("a busy answer without Retry-After or explanation:\n%s", p.Body)
				}
				busy++
			default:
				t.Fatalf("flood sign-in: %d", p.Status)
			}
		}
		if busy == 0 {
			t.Fatalf("16 simultaneous sign-ins with one check at a time and a queue of 2: none was refused; the checks are not bounded")
		}
		if quietPage.Status != http.StatusSeeOther {
			t.Fatalf("sign-in at the other site during the flood: %d, want 303\n%s", quietPage.Status, quietPage.Body)
		}
	})
}

// A site's share of the password checks (login_checks_per_site): a flood
// of sign-ins at one site beyond it is refused (429) before it queues for
// the checks every site shares, while another site signs in meanwhile.
func TestSignInChecksBudgetPerSite(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, withLimits(map[limits.Name]int{limits.LoginChecksPerSite: 2}))
		const n = 12
		type ready struct {
			b *oauthtest.Browser
			v map[string][]string
		}
		flood := make([]ready, n)
		for i := range flood {
			b, v := signInForm(t, ts, ts.academy(), nextSourceIP(), demo.StudentEmail, "wrong-"+strconv.Itoa(i))
			flood[i] = ready{b, v}
		}
		statuses := make([]*oauthtest.Page, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, f := range flood {
			wg.Go(func() {
				<-start
				p, err := f.b.PostForm(ts.academy()+"/login", f.v)
				if err != nil {
					t.Error(err)
					return
				}
				statuses[i] = p
			})
		}
		close(start)
		wg.Wait()
		if t.Failed() {
			return
		}
		refused := 0
		for _, p := range statuses {
			switch p.Status {
			case http.StatusUnauthorized:
			case http.StatusTooManyRequests:
				if p.Header.Get("Retry-After") == "" || !hasText(p, "Too many sign-ins at this site right now") {
					t.Fatalf("a refusal without Retry-After or explanation:\n%s", p.Body)
				}
				refused++
			default:
				t.Fatalf("flood sign-in: %d", p.Status)
			}
		}
		if refused == 0 {
			t.Fatal("12 simultaneous sign-ins at a budget of 2 checks a second: none refused")
		}
		if p := signInFrom(t, ts, ts.open(), nextSourceIP(), demo.StudentEmail, demo.StudentPassword); p.Status != http.StatusSeeOther {
			t.Fatalf("the other site: %d\n%s", p.Status, p.Body)
		}
	})
}
