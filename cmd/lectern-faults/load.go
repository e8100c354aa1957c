package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"
)

// tally counts outcomes per operation and collects invariant violations.
type tally struct {
	mu         sync.Mutex
	counts     map[string]int
	total, ok  int
	violations []string
	nviol      int
	// lastFail is the time of each operation's last failed answer;
	// lastOK of its last success (recovery: the last failure after the
	// fault was healed, followed by successes).
	lastFail map[string]time.Time
	lastOK   map[string]time.Time
	// start is when the tally began; violations say how long after it.
	start time.Time
	// frozen: the load is stopping, and canceled requests are not counted.
	frozen bool
}

func newTally() *tally {
	return &tally{counts: map[string]int{}, lastFail: map[string]time.Time{}, lastOK: map[string]time.Time{}, start: time.Now()}
}

// add records op's outcome; ok says whether it is the operation's normal
// answer.
func (t *tally) add(op string, out outcome, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.frozen {
		return
	}
	t.counts[op+" "+string(out)]++
	// Probes are listed, not counted as requests: a draining replica's
	// 503 is the truth, not a failure.
	probe := op == "readyz"
	if !probe {
		t.total++
	}
	now := time.Now()
	if ok {
		if !probe {
			t.ok++
		}
		t.lastOK[op] = now
	} else {
		t.lastFail[op] = now
	}
}

func (t *tally) violate(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.frozen {
		return
	}
	t.nviol++
	if len(t.violations) < 8 {
		t.violations = append(t.violations, fmt.Sprintf("at %.1f s: ", time.Since(t.start).Seconds())+fmt.Sprintf(format, args...))
	}
}

// summary is "refresh 200: 1234, refresh 503: 12, ..." by operation.
func (t *tally) summary() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	keys := make([]string, 0, len(t.counts))
	for k := range t.counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %d", k, t.counts[k]))
	}
	return strings.Join(parts, ", ")
}

// totals counts every answer and the expected ones (a 200, or the
// refusal a check wants).
func (t *tally) totals() (total, ok int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total, t.ok
}

// recovery is how long after healed the last failure of any operation
// came; -1 when some operation never succeeded after it.
func (t *tally) recovery(healed time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	var worst time.Duration
	for op, f := range t.lastFail {
		if f.Before(healed) {
			continue
		}
		if ok := t.lastOK[op]; ok.Before(f) {
			return -1
		}
		worst = max(worst, f.Sub(healed))
	}
	return worst
}

// loadSpec is the mix of workers a scenario runs.
type loadSpec struct {
	flow, refresh, userinfo, revoke, replay int
	// perWorker caps each worker's rate (operations per second).
	perWorker float64
}

func (s loadSpec) String() string {
	var parts []string
	for _, p := range []struct {
		n    int
		name string
	}{{s.flow, "flow"}, {s.refresh, "refresh"}, {s.userinfo, "userinfo"}, {s.revoke, "revoke"}, {s.replay, "replay"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.name))
		}
	}
	return strings.Join(parts, ", ") + fmt.Sprintf(" workers, ≤%.0f ops/s each", s.perWorker)
}

// load is the running workload and what it learned: tokens known valid,
// tokens revoked (and acknowledged), refresh tokens spent.
type load struct {
	c       *client
	clients []string
	t       *tally
	// strict: any abnormal answer is a failed request (rolling restart,
	// key rotation); else 503 and no answer are allowed during a fault.
	strict bool
	// cacheLoss: the fault loses cache contents, so a code may vanish
	// (invalid_grant after a 503 is then not a burnt code).
	cacheLoss bool
	// bound, when set by the fault, replaces recoveryBound.
	bound time.Duration

	mu      sync.Mutex
	valid   []string // access tokens never revoked, of grants never refreshed
	revoked []revokedToken
	spent   []spentToken // the last spent refresh token of each chain
}

type revokedToken struct {
	clientID, access, refresh string
	at                        time.Time // when the revocation's 200 came
}
type spentToken struct{ clientID, rt string }

// acceptable reports whether out is a normal answer or, outside strict
// scenarios, an outage answer (503, none). 500 and other 5xx are never
// acceptable.
func (l *load) acceptable(op string, out outcome) bool {
	if out == outOK {
		return true
	}
	s := out.status()
	if s >= 500 && s != 503 {
		l.t.violate("%s answered %s (a fault must give 503, never 500)", op, out)
		return false
	}
	if l.strict {
		l.t.violate("%s failed: %s (zero failed requests required)", op, out)
	}
	return false
}

func (l *load) addValid(at string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.valid) < 64 {
		l.valid = append(l.valid, at)
	} else {
		l.valid[rand.IntN(len(l.valid))] = at
	}
}

func (l *load) pickValid() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.valid) == 0 {
		return ""
	}
	return l.valid[rand.IntN(len(l.valid))]
}

func (l *load) pickRevoked() (revokedToken, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.revoked) == 0 {
		return revokedToken{}, false
	}
	return l.revoked[rand.IntN(len(l.revoked))], true
}

// run drives the workers until ctx ends.
func (l *load) run(ctx context.Context, spec loadSpec) {
	var wg sync.WaitGroup
	pace := time.Duration(float64(time.Second) / spec.perWorker)
	start := func(n int, name string, op func(ctx context.Context, w int)) {
		for w := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					t0 := time.Now()
					op(ctx, w)
					if d := pace - time.Since(t0); d > 0 {
						select {
						case <-ctx.Done():
						case <-time.After(d):
						}
					}
				}
			}()
		}
	}
	start(spec.flow, "flow", l.flowOp)
	start(spec.userinfo, "userinfo", l.userinfoOp)
	start(spec.revoke, "revoke", l.revokeOp)
	start(spec.replay, "replay", l.replayOp)
	// /readyz, as a load balancer probes it: 503 is its answer during an
	// outage (not a failed request), and counts in the recovery time.
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			code, _, err := l.c.get("/readyz")
			if ctx.Err() != nil {
				return
			}
			out := statusOutcome(code, "")
			if err != nil {
				out = transportOutcome(err)
			}
			l.t.add("readyz", out, out == outOK)
			if s := out.status(); s >= 500 && s != 503 {
				l.t.violate("/readyz answered %s", out)
			}
			select {
			case <-ctx.Done():
			case <-time.After(250 * time.Millisecond):
			}
		}
	}()
	for w := range spec.refresh {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.refreshWorker(ctx, w, pace)
		}()
	}
	wg.Wait()
}

func (l *load) clientFor(w, k int) string { return l.clients[(w*7+k)%len(l.clients)] }

// flowRecord runs a code flow and records its steps under "flow".
func (l *load) flowRecord(ctx context.Context, clientID string) (tokAccess, tokRefresh string, ok bool) {
	tok, steps := l.c.flow(ctx, clientID)
	if ctx.Err() != nil {
		return "", "", false
	}
	for i, s := range steps {
		op, out, _ := strings.Cut(string(s), " ")
		good := strings.HasPrefix(out, "200")
		if good && op == "exchange" && i > 1 {
			// The same code, after the failed attempts before it.
			out = "200 on a retry"
		}
		l.t.add("flow/"+op, outcome(out), good)
		switch {
		case good:
		case op == "exchange" && strings.HasPrefix(out, "400") && !l.cacheLoss:
			// The cache kept its codes: a refused code is a lost one.
			why := "a fresh code"
			if i > 1 {
				why = "on the retry after " + string(steps[i-1]) + ", a code (the failed attempt burnt it)"
			}
			l.t.violate("%s was refused: %s", why, out)
		default:
			l.acceptable("flow/"+op, outcome(out))
		}
	}
	if tok == nil {
		return "", "", false
	}
	return tok.AccessToken, tok.RefreshToken, true
}

func (l *load) flowOp(ctx context.Context, w int) {
	at, _, ok := l.flowRecord(ctx, l.clientFor(w, rand.IntN(4)))
	if ok {
		l.addValid(at)
	}
}

// userinfoOp: a valid token must never get 401.
func (l *load) userinfoOp(ctx context.Context, _ int) {
	at := l.pickValid()
	if at == "" {
		time.Sleep(20 * time.Millisecond)
		return
	}
	out := l.c.userinfo(ctx, at)
	if ctx.Err() != nil {
		return
	}
	l.t.add("userinfo", out, out == outOK)
	if out == "401" {
		l.t.violate("userinfo answered 401 for a valid access token")
		return
	}
	if out != outOK {
		l.acceptable("userinfo", out)
	}
}

// revokeOp: a token revoked with a 200 is refused from then on (checked at
// once, and again by later runs of this op on a random revoked token).
func (l *load) revokeOp(ctx context.Context, w int) {
	if old, ok := l.pickRevoked(); ok {
		out := l.c.userinfo(ctx, old.access)
		if ctx.Err() != nil {
			return
		}
		l.t.add("revoked-check", out, out == "401")
		switch {
		case out == outOK:
			l.t.violate("a revoked access token was accepted again (userinfo 200)")
		case out != "401":
			l.acceptable("revoked-check", out)
		}
	}
	clientID := l.clientFor(w, 5)
	at, rt, ok := l.flowRecord(ctx, clientID)
	if !ok {
		return
	}
	for ctx.Err() == nil {
		out := l.c.revoke(ctx, clientID, at)
		if ctx.Err() != nil {
			return
		}
		l.t.add("revoke", out, out == outOK)
		if out == outOK {
			break
		}
		l.acceptable("revoke", out)
		time.Sleep(100 * time.Millisecond)
	}
	if ctx.Err() != nil {
		return
	}
	l.mu.Lock()
	l.revoked = append(l.revoked, revokedToken{clientID: clientID, access: at, refresh: rt, at: time.Now()})
	l.mu.Unlock()
	out := l.c.userinfo(ctx, at)
	if ctx.Err() != nil {
		return
	}
	l.t.add("revoked-check", out, out == "401")
	if out == outOK {
		l.t.violate("an access token was accepted right after its revocation was acknowledged")
	} else if out != "401" {
		l.acceptable("revoked-check", out)
	}
}

// replayOp: a refresh token used once is refused when presented again,
// and that reuse revokes the grant, so the newest refresh token is refused
// too.
func (l *load) replayOp(ctx context.Context, w int) {
	clientID := l.clientFor(w, 6)
	_, rt0, ok := l.flowRecord(ctx, clientID)
	if !ok {
		return
	}
	tok, out := l.c.refresh(ctx, clientID, rt0)
	if ctx.Err() != nil {
		return
	}
	l.t.add("replay/first-use", out, out == outOK)
	if out != outOK {
		l.acceptable("replay/first-use", out)
		return
	}
	out = tokenRetry(ctx, l, "replay/reuse", func() outcome { _, o := l.c.refresh(ctx, clientID, rt0); return o })
	if out == outOK {
		l.t.violate("a refresh token was accepted twice")
		return
	}
	if ctx.Err() != nil || !strings.HasPrefix(string(out), "400") {
		return
	}
	out = tokenRetry(ctx, l, "replay/after-reuse", func() outcome { _, o := l.c.refresh(ctx, clientID, tok.RefreshToken); return o })
	if out == outOK {
		l.t.violate("the grant of a reused refresh token still refreshed (reuse must revoke it)")
	}
}

// tokenRetry repeats a token request while it gets 503 or no answer and
// returns the first definite answer; a 200 is recorded as abnormal here
// (the callers expect refusals).
func tokenRetry(ctx context.Context, l *load, op string, try func() outcome) outcome {
	for ctx.Err() == nil {
		out := try()
		if ctx.Err() != nil {
			return out
		}
		refused := strings.HasPrefix(string(out), "400")
		l.t.add(op, out, refused)
		if out == outOK || refused {
			return out
		}
		l.acceptable(op, out)
		time.Sleep(100 * time.Millisecond)
	}
	return ""
}

// refreshWorker keeps refresh chains going: each success replaces the
// chain's token; a 503 or no answer retries the same token; invalid_grant
// after an answered 200 is a valid token refused.
func (l *load) refreshWorker(ctx context.Context, w int, pace time.Duration) {
	type chain struct {
		clientID, rt, spent string
		afterFailure        bool
	}
	var chains []*chain
	defer func() {
		l.mu.Lock()
		for _, c := range chains {
			if c.spent != "" {
				l.spent = append(l.spent, spentToken{c.clientID, c.spent})
			}
		}
		l.mu.Unlock()
	}()
	newChain := func(k int) *chain {
		clientID := l.clientFor(w, k)
		_, rt, ok := l.flowRecord(ctx, clientID)
		if !ok {
			return nil
		}
		return &chain{clientID: clientID, rt: rt}
	}
	for n := 0; ctx.Err() == nil; n++ {
		t0 := time.Now()
		k := n % 3
		for len(chains) <= k && ctx.Err() == nil {
			if c := newChain(len(chains)); c != nil {
				chains = append(chains, c)
			} else {
				time.Sleep(100 * time.Millisecond)
			}
		}
		if ctx.Err() != nil {
			return
		}
		c := chains[k]
		tok, out := l.c.refresh(ctx, c.clientID, c.rt)
		if ctx.Err() != nil {
			return
		}
		l.t.add("refresh", out, out == outOK)
		switch {
		case out == outOK:
			c.spent, c.rt, c.afterFailure = c.rt, tok.RefreshToken, false
		case strings.HasPrefix(string(out), "400"):
			if !c.afterFailure {
				l.t.violate("a valid refresh token was refused: %s", out)
			}
			// After a failed attempt the server may have rotated the
			// token without the answer arriving: the chain is lost, and
			// presenting it again rightly revoked the grant.
			l.t.add("refresh/chain-lost-after-failure", outcome("after "+string(out)), true)
			if nc := newChain(k); nc != nil {
				if c.spent != "" {
					l.mu.Lock()
					l.spent = append(l.spent, spentToken{c.clientID, c.spent})
					l.mu.Unlock()
				}
				chains[k] = nc
			}
		default:
			l.acceptable("refresh", out)
			c.afterFailure = true
		}
		if d := pace - time.Since(t0); d > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(d):
			}
		}
	}
}

// finalChecks, once the service is back: every revoked token is still
// refused, every spent refresh token is refused, and a valid token works.
func (l *load) finalChecks(ctx context.Context) {
	l.mu.Lock()
	revoked := append([]revokedToken(nil), l.revoked...)
	spent := append([]spentToken(nil), l.spent...)
	l.mu.Unlock()
	if len(revoked) > 200 {
		revoked = revoked[len(revoked)-200:]
	}
	if len(spent) > 100 {
		spent = spent[:100]
	}
	for _, r := range revoked {
		out := l.c.userinfo(ctx, r.access)
		l.t.add("final/revoked", out, out == "401")
		if out == outOK {
			l.t.violate("after recovery, a revoked access token was accepted")
		} else if out != "401" {
			l.t.violate("after recovery, checking a revoked token answered %s", out)
		}
	}
	for _, s := range spent {
		_, out := l.c.refresh(ctx, s.clientID, s.rt)
		l.t.add("final/spent-refresh", out, strings.HasPrefix(string(out), "400"))
		if out == outOK {
			l.t.violate("after recovery, a spent refresh token was accepted again")
		} else if !strings.HasPrefix(string(out), "400") {
			l.t.violate("after recovery, replaying a spent refresh token answered %s", out)
		}
	}
}

// freeze stops counting (true) or starts again (false).
func (t *tally) freeze(on bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.frozen = on
}

// lastFailAfter reports whether any operation failed after t.
func (t *tally) lastFailAfter(at time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, f := range t.lastFail {
		if f.After(at) {
			return true
		}
	}
	return false
}

// revokedBetween counts the revocations acknowledged in [from, to].
func (l *load) revokedBetween(from, to time.Time) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.revoked {
		if !r.at.Before(from) && !r.at.After(to) {
			n++
		}
	}
	return n
}
