package authserver

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/lectern/lectern/authserver/password"
	"github.com/lectern/lectern/limits"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// Sign-in throttling (DESIGN §10, issue 14), after Auth0's brute-force
// protection and Microsoft's smart lockout. Accounts are platform-wide, so
// every counter is too: a failure at one site counts at all of them.
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
type loginAttempt struct {
	site             *tenant.Site
	pair, acct, wait string // the account's keys (one Cluster slot)
	addr             string // the IP's key
	window           time.Duration
	pairMax, ipMax   int
	acctMax          int
}

// audited is the key that marks the pair's refusals for reason as
// audited in this window.
func (a *loginAttempt) audited(reason string) string { return a.pair + ":audited:" + reason }

// loginRefusal is why an attempt is not checked: the status, the
// Retry-After and the sentence the sign-in page shows.
type loginRefusal struct {
	status  int
	retry   time.Duration
	message string
	reason  string // for the audit event
}

func (s *Server) newLoginAttempt(ctx context.Context, site *tenant.Site, email, ip string) *loginAttempt {
	ip = addressOf(ip)
	pairMax, window := s.limits.Rate(ctx, limits.LoginFailuresPerAccountIP)
	return &loginAttempt{
		site:    site,
		pair:    storage.AccountKey(email, "loginfail", ip),
		acct:    storage.AccountKey(email, "loginfail", "all"),
		wait:    storage.AccountKey(email, "loginwait", ip),
		addr:    storage.AddressKey(ip, "loginfail"),
		window:  window,
		pairMax: pairMax,
		ipMax:   s.limits.Get(ctx, limits.LoginFailuresPerIP),
		acctMax: s.limits.Get(ctx, limits.LoginFailuresPerAccount),
	}
}

// admit decides, before any password is checked, whether the attempt may
// go on. A nil refusal and nil error: go on.
func (s *Server) admit(ctx context.Context, a *loginAttempt) (*loginRefusal, error) {
	ipFails, err := s.cache.Get(ctx, a.addr)
	if err != nil && !errors.Is(err, storage.ErrCacheMiss) {
		return nil, err
	}
	if atoi(ipFails) >= a.ipMax {
		return &loginRefusal{http.StatusTooManyRequests, a.window,
			"Too many failed sign-in attempts from your network. Please wait 15 minutes and try again.", "ip"}, nil
	}
	counts, err := s.cache.GetMulti(ctx, a.pair, a.acct)
	if err != nil {
		return nil, err
	}
	if atoi(counts[0]) >= a.pairMax {
		return tooManyForPair(a), nil
	}
	if f := atoi(counts[1]); f >= a.acctMax {
		wait := accountWait(f, a.acctMax)
		deadline := s.now().Add(wait)
		ok, err := s.cache.SetNX(ctx, a.wait, []byte(strconv.FormatInt(deadline.Unix(), 10)), wait)
		if err != nil {
			return nil, err
		}
		if !ok {
			left := wait
			if b, err := s.cache.Get(ctx, a.wait); err == nil {
				left = time.Duration(int64(atoi(b))-s.now().Unix()) * time.Second
			}
			left = max(left, time.Second)
			return &loginRefusal{http.StatusTooManyRequests, left,
				"This account has had many failed sign-in attempts, so each device must wait between attempts. Please try again in " + humanDuration(left) + ".", "account"}, nil
		}
	}
	return nil, nil
}

func tooManyForPair(a *loginAttempt) *loginRefusal {
	return &loginRefusal{http.StatusTooManyRequests, a.window,
		"Too many failed sign-in attempts. Please wait 15 minutes and try again.", "account_ip"}
}

// accountWait is the wait between attempts per IP once an account has had
// failures >= ceiling: 1 minute, doubled per further ceiling's worth, at
// most 15 minutes.
func accountWait(failures, ceiling int) time.Duration {
	steps := min((failures-ceiling)/max(ceiling, 1), 4)
	return min(time.Minute<<steps, 15*time.Minute)
}

// check verifies the password under the gate and the pair's reserved
// slot. It returns password.ErrMismatch for a wrong password, a refusal
// when the pair's limit was reached meanwhile or the gate is full, or
// another error when the cache cannot answer.
func (s *Server) check(ctx context.Context, a *loginAttempt, pw, hash string) (*loginRefusal, error) {
	// The site's share of this replica's hashing: a flood at one site is
	// spaced out here, before it queues for the gate every site shares.
	if ok, retry := s.loginBudget.Take(ctx, 1); !ok {
		return &loginRefusal{http.StatusTooManyRequests, retry,
			"Too many sign-ins at this site right now. Please try again in a few seconds.", "busy"}, nil
	}
	release, err := s.passwords.Acquire(ctx, strconv.FormatInt(int64(a.site.ID), 10), hash)
	if errors.Is(err, password.ErrBusy) {
		return &loginRefusal{http.StatusServiceUnavailable, 2 * time.Second,
			"Too many sign-ins are being checked right now. Please try again in a few seconds.", "busy"}, nil
	}
	if err != nil {
		return nil, err
	}
	defer release()
	n, err := s.cache.Incr(ctx, a.pair, a.window)
	if err != nil {
		return nil, err
	}
	if n > int64(a.pairMax) {
		return tooManyForPair(a), nil
	}
	return nil, password.Verify(pw, hash)
}

// failed records a failed check against the account and the IP (the pair
// counted it already).
func (s *Server) failed(ctx context.Context, a *loginAttempt) {
	for _, k := range []string{a.acct, a.addr} {
		if _, err := s.cache.Incr(ctx, k, a.window); err != nil {
			s.logger.WarnContext(ctx, "sign-in failure not counted", "err", err)
		}
	}
}

// succeeded gives the pair its slots back: the IP knows the password.
func (s *Server) succeeded(ctx context.Context, a *loginAttempt) {
	if err := s.cache.Delete(ctx, a.pair, a.wait); err != nil {
		s.logger.WarnContext(ctx, "sign-in counters not reset", "err", err)
	}
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
