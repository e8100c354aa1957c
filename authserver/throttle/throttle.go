package throttle

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/lectern/lectern/authserver/password"
	"github.com/lectern/lectern/i18n"
	"github.com/lectern/lectern/limits"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// Sign-in throttling, after Auth0's brute-force protection and Microsoft's
// smart lockout. Accounts are platform-wide, so every counter is too: a
// failure at one site counts at all of them, and a wrong current password
// on an account page counts as a failed sign-in.
//
//   - the pair (account, IP) is refused after LoginFailuresPerAccountIP
//     failures in 15 minutes: a guesser is stopped, the owner elsewhere is
//     not;
//   - an IP is refused after LoginFailuresPerIP failures in 15 minutes,
//     whatever the accounts (password spraying);
//   - beyond LoginFailuresPerAccount failures in 15 minutes from anywhere,
//     each IP must wait between attempts on that account, a wait that
//     doubles with every further ceiling's worth of failures (1 minute up
//     to 15). Never a lockout: the first attempt from an IP is admitted,
//     so the owner with the right password still signs in.
//
// A pair's attempt is counted before the password is checked (a reserved
// slot, given back by a success), so concurrent guesses beyond the limit
// are refused without hashing. The counters are keyed by the e-mail
// address as typed (case-folded), whether or not an account has it: the
// answers say nothing about which addresses have accounts.

// ErrMismatch is Verify's answer to a wrong password (password.ErrMismatch),
// so that its callers need not import the hashing package.
var ErrMismatch = password.ErrMismatch

// Options configures New.
type Options struct {
	// Cache holds the counters. Required.
	Cache storage.Cache
	// Limits are the platform's limits with each site's overrides. Nil:
	// the built-in defaults.
	Limits *limits.Config
	// Gate bounds the password checks running at once. Pass the one
	// every page of the process shares; nil: a gate of its own with the
	// default options.
	Gate *password.Gate
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Logger reports counters the cache could not update. Required.
	Logger *slog.Logger
}

// Throttle counts failed password checks and decides which attempts may
// be checked at all.
type Throttle struct {
	cache  storage.Cache
	limits *limits.Config
	gate   *password.Gate
	budget *limits.Budgets
	now    func() time.Time
	logger *slog.Logger
}

// New returns a Throttle.
func New(o Options) *Throttle {
	t := &Throttle{cache: o.Cache, limits: o.Limits, gate: o.Gate, now: o.Now, logger: o.Logger}
	if t.gate == nil {
		t.gate = password.NewGate(password.GateOptions{})
	}
	if t.now == nil {
		t.now = time.Now
	}
	t.budget = limits.NewBudgets(t.limits, limits.LoginChecksPerSite)
	return t
}

// Attempt is one check of a password for an account from an IP.
type Attempt struct {
	site             *tenant.Site
	pair, acct, wait string // the account's keys (one Cluster slot)
	addr             string // the IP's key
	window           time.Duration
	pairMax, ipMax   int
	acctMax          int
}

// Refusal is why an attempt is not checked: the status, the Retry-After
// and the sentence the page shows.
type Refusal struct {
	Status int
	Retry  time.Duration
	// Reason names the refusal for the audit event: "ip", "account_ip",
	// "account" or "busy" (capacity, not an event about the account).
	Reason  string
	message string
}

// Error makes a refusal an error, so that it can come back through code
// that returns errors (internal/platform's account flows hash through
// Hash); errors.As finds it.
func (f *Refusal) Error() string { return "throttle: refused (" + f.Reason + ")" }

// RetryAfter is the value of the Retry-After header: whole seconds, at
// least 1.
func (f *Refusal) RetryAfter() string { return strconv.Itoa(max(1, int(f.Retry.Seconds()+0.999))) }

// Message is the sentence a page shows, for lang: a catalog sentence the
// page's templates translate (tr), or one already translated.
func (f *Refusal) Message(lang string) string {
	if f.Reason == "account" {
		return i18n.T(lang, "login.account_wait", "Wait", i18n.Duration(lang, f.Retry))
	}
	return f.message
}

// Attempt starts an attempt on the account of email from ip at site.
func (t *Throttle) Attempt(ctx context.Context, site *tenant.Site, email, ip string) *Attempt {
	ip = Address(ip)
	pairMax, window := t.limits.Rate(ctx, limits.LoginFailuresPerAccountIP)
	return &Attempt{
		site:    site,
		pair:    storage.AccountKey(email, "loginfail", ip),
		acct:    storage.AccountKey(email, "loginfail", "all"),
		wait:    storage.AccountKey(email, "loginwait", ip),
		addr:    storage.AddressKey(ip, "loginfail"),
		window:  window,
		pairMax: pairMax,
		ipMax:   t.limits.Get(ctx, limits.LoginFailuresPerIP),
		acctMax: t.limits.Get(ctx, limits.LoginFailuresPerAccount),
	}
}

// Admit decides, before any password is checked, whether the attempt may
// go on. A nil refusal and nil error: go on.
func (t *Throttle) Admit(ctx context.Context, a *Attempt) (*Refusal, error) {
	ipFails, err := t.cache.Get(ctx, a.addr)
	if err != nil && !errors.Is(err, storage.ErrCacheMiss) {
		return nil, err
	}
	if atoi(ipFails) >= a.ipMax {
		return &Refusal{http.StatusTooManyRequests, a.window, "ip",
			"Too many failed sign-in attempts from your network. Please wait 15 minutes and try again."}, nil
	}
	counts, err := t.cache.GetMulti(ctx, a.pair, a.acct)
	if err != nil {
		return nil, err
	}
	if atoi(counts[0]) >= a.pairMax {
		return tooManyForPair(a), nil
	}
	if f := atoi(counts[1]); f >= a.acctMax {
		wait := accountWait(f, a.acctMax)
		deadline := t.now().Add(wait)
		ok, err := t.cache.SetNX(ctx, a.wait, []byte(strconv.FormatInt(deadline.Unix(), 10)), wait)
		if err != nil {
			return nil, err
		}
		if !ok {
			left := wait
			if b, err := t.cache.Get(ctx, a.wait); err == nil {
				left = time.Duration(int64(atoi(b))-t.now().Unix()) * time.Second
			}
			left = max(left, time.Second)
			return &Refusal{http.StatusTooManyRequests, left, "account",
				"This account has had many failed sign-in attempts, so each device must wait between attempts. Please try again in " + humanDuration(left) + "."}, nil
		}
	}
	return nil, nil
}

func tooManyForPair(a *Attempt) *Refusal {
	return &Refusal{http.StatusTooManyRequests, a.window, "account_ip",
		"Too many failed sign-in attempts. Please wait 15 minutes and try again."}
}

// accountWait is the wait between attempts per IP once an account has had
// failures >= ceiling: 1 minute, doubled per further ceiling's worth, at
// most 15 minutes.
func accountWait(failures, ceiling int) time.Duration {
	steps := min((failures-ceiling)/max(ceiling, 1), 4)
	return min(time.Minute<<steps, 15*time.Minute)
}

// Check verifies the password under the gate and the pair's reserved
// slot. It returns password.ErrMismatch for a wrong password, a refusal
// when the pair's limit was reached meanwhile or the gate is full, or
// another error when the cache cannot answer.
func (t *Throttle) Check(ctx context.Context, a *Attempt, pw, hash string) (*Refusal, error) {
	release, refusal, err := t.admitWork(ctx, signInBusy, func() (func(), error) {
		return t.gate.Acquire(ctx, gateKey(a.site), hash)
	})
	if refusal != nil || err != nil {
		return refusal, err
	}
	defer release()
	n, err := t.cache.Incr(ctx, a.pair, a.window)
	if err != nil {
		return nil, err
	}
	if n > int64(a.pairMax) {
		return tooManyForPair(a), nil
	}
	return nil, password.Verify(pw, hash)
}

// busyWords are the sentences of the two capacity refusals: the site's
// check budget spent (429) and the gate's queue full (503).
type busyWords struct{ site, gate string }

var (
	signInBusy = busyWords{
		site: "Too many sign-ins at this site right now. Please try again in a few seconds.",
		gate: "Too many sign-ins are being checked right now. Please try again in a few seconds.",
	}
	newPasswordBusy = busyWords{
		site: "Too many passwords are being set at this site right now. Please try again in a few seconds.",
		gate: "Too many passwords are being processed right now. Please try again in a few seconds.",
	}
)

// admitWork admits one argon2id hash or check for the site of ctx: the
// site's share of this replica's hashing (login_checks_per_site), so that
// a flood at one site is spaced out before it queues for the gate every
// site shares, then the gate (acquire). A refusal: nothing may run.
func (t *Throttle) admitWork(ctx context.Context, words busyWords, acquire func() (func(), error)) (func(), *Refusal, error) {
	if ok, retry := t.budget.Take(ctx, 1); !ok {
		return nil, &Refusal{http.StatusTooManyRequests, retry, "busy", words.site}, nil
	}
	release, err := acquire()
	if errors.Is(err, password.ErrBusy) {
		// Load shed by design: logged as a warning, not as a failure.
		tenant.Shed(ctx)
		return nil, &Refusal{http.StatusServiceUnavailable, 2 * time.Second, "busy", words.gate}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return release, nil, nil
}

func gateKey(site *tenant.Site) string { return strconv.FormatInt(int64(site.ID), 10) }

// Hash hashes a new password someone typed at site (a sign-up, a reset,
// an invitation accepted with a new account) under p. It is the same
// argon2id work as a check, so it spends the site's check budget and
// waits for the gate as a sign-in does, with the same refusals (429 when
// the budget is spent, 503 when the gate's queue is full; nothing was
// hashed). Nothing is counted against an account: no password is
// checked.
func (t *Throttle) Hash(ctx context.Context, site *tenant.Site, pw string, p password.Params) (string, *Refusal, error) {
	release, refusal, err := t.admitWork(ctx, newPasswordBusy, func() (func(), error) {
		return t.gate.AcquireHash(ctx, gateKey(site), p)
	})
	if refusal != nil || err != nil {
		return "", refusal, err
	}
	defer release()
	hash, err := password.Hash(pw, p)
	return hash, nil, err
}

// Hasher is Hash at site for code that reports everything as an error
// (internal/platform's Hasher): a refusal comes back as its *Refusal.
func (t *Throttle) Hasher(site *tenant.Site) func(ctx context.Context, pw string, p password.Params) (string, error) {
	return func(ctx context.Context, pw string, p password.Params) (string, error) {
		hash, refusal, err := t.Hash(ctx, site, pw, p)
		if refusal != nil {
			return "", refusal
		}
		return hash, err
	}
}

// Failed records a failed check against the account and the IP (the pair
// counted it already).
func (t *Throttle) Failed(ctx context.Context, a *Attempt) {
	for _, k := range []string{a.acct, a.addr} {
		if _, err := t.cache.Incr(ctx, k, a.window); err != nil {
			t.logger.WarnContext(ctx, "sign-in failure not counted", "err", err)
		}
	}
}

// Succeeded gives the pair its slots back: the IP knows the password.
func (t *Throttle) Succeeded(ctx context.Context, a *Attempt) {
	if err := t.cache.Delete(ctx, a.pair, a.wait); err != nil {
		t.logger.WarnContext(ctx, "sign-in counters not reset", "err", err)
	}
}

// FirstRefusal reports whether this is the pair's first refusal for
// reason in the window, so that a throttled pair is audited once, not per
// attempt (refused attempts are cheap to send, and each must not cost a
// database write).
func (t *Throttle) FirstRefusal(ctx context.Context, a *Attempt, reason string) bool {
	first, err := t.cache.SetNX(ctx, a.pair+":audited:"+reason, []byte{1}, a.window)
	return err == nil && first
}

// Verify checks pw against hash for the account of email, as the sign-in
// form does: admitted by the counters, under the gate, a failure counted
// and a success resetting the pair. It returns a refusal (nothing was
// checked), password.ErrMismatch for a wrong password (counted), nil for
// the right one, or another error when the cache cannot answer. The pages
// that ask a signed-in person for their current password use it.
func (t *Throttle) Verify(ctx context.Context, site *tenant.Site, email, ip, pw, hash string) (*Refusal, *Attempt, error) {
	a := t.Attempt(ctx, site, email, ip)
	refusal, err := t.Admit(ctx, a)
	if refusal != nil || err != nil {
		return refusal, a, err
	}
	refusal, err = t.Check(ctx, a, pw, hash)
	switch {
	case refusal != nil:
		return refusal, a, nil
	case errors.Is(err, password.ErrMismatch) || errors.Is(err, password.ErrMalformed):
		t.Failed(ctx, a)
		return nil, a, password.ErrMismatch
	case err != nil:
		return nil, a, err
	}
	t.Succeeded(ctx, a)
	return nil, a, nil
}

// Address is the client address per-IP limits count: an IPv4 address, or
// the /64 an IPv6 address belongs to (one subscriber gets a whole /64, so
// counting single IPv6 addresses would count nothing).
func Address(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

func humanDuration(d time.Duration) string {
	if d < time.Minute {
		return strconv.Itoa(int(d.Seconds()+0.5)) + " seconds"
	}
	m := int((d + time.Minute - 1) / time.Minute)
	if m == 1 {
		return "a minute"
	}
	return strconv.Itoa(m) + " minutes"
}

func atoi(b []byte) int {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}
