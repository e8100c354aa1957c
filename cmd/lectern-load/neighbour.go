package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lectern/lectern/internal/demo"
)

// The noisy neighbour (issue 14, --neighbour): Open School (the quiet
// site) runs code flows (authorize with a session → token exchange) at
// --quiet-concurrency, first alone, then while Demo Academy (the noisy
// site) is flooded at full speed by --flood-concurrency workers, shared
// between the kinds of request --flood names: "token" (refresh-token
// rotation), "graphql" (the Member API query of the graphql scenario),
// "mcp" (an anonymous tools/call) and "signin" (wrong passwords for
// addresses without accounts, each a full argon2id check, each from a
// loopback address of its own so that the per-address sign-in limits do
// not stop them first). It prints the quiet site's latency in both phases
// and what the noisy site's flood was answered.

// floodKinds are the kinds of flooding request, in the table's order.
var floodKinds = []string{"token", "graphql", "mcp", "signin"}

// tally counts a flood's answers by kind and status class.
type tally struct {
	mu sync.Mutex
	n  map[string]map[int]int
}

func (t *tally) add(kind string, status int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n[kind] == nil {
		t.n[kind] = map[int]int{}
	}
	t.n[kind][status]++
}

func (t *tally) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var parts []string
	for _, k := range floodKinds {
		var ss []string
		var codes []int
		for c := range t.n[k] {
			codes = append(codes, c)
		}
		slices.Sort(codes)
		for _, c := range codes {
			ss = append(ss, fmt.Sprintf("%d×%d", t.n[k][c], c))
		}
		parts = append(parts, k+": "+strings.Join(ss, " "))
	}
	return strings.Join(parts, "; ")
}

func runNeighbour(ctx context.Context, cfg config) error {
	_, portStr, _ := net.SplitHostPort(cfg.target)
	port, _ := strconv.Atoi(portStr)
	quietCfg, noisyCfg := cfg, cfg
	quietCfg.origin, noisyCfg.origin = demo.OpenOrigin(port), demo.AcademyOrigin(port)
	quiet, err := newBench(quietCfg, demo.OpenSlug, 64, cfg.quietConc)
	if err != nil {
		return err
	}
	noisy, err := newBench(noisyCfg, demo.AcademySlug, 16, 1)
	if err != nil {
		return err
	}
	for _, b := range []*bench{quiet, noisy} {
		if err := b.setup(ctx); err != nil {
			return fmt.Errorf("setup of %s: %w", b.slug, err)
		}
	}
	for len(quiet.conns) < cfg.quietConc {
		quiet.conns = append(quiet.conns, newConn(cfg.target))
	}
	noisy.conns = []*conn{newConn(cfg.target)}
	per := max(1, cfg.floodConc/len(cfg.flood))
	// Refresh chains (one per token worker) and an access token, from
	// real flows at the noisy site.
	chains := make([]*tokens, per)
	for w := range chains {
		t, err := noisy.flow(0, noisy.clients[w%len(noisy.clients)])
		if err != nil {
			return fmt.Errorf("preparing the flood: %w", err)
		}
		chains[w] = t
	}

	label := cfg.label
	if label == "" {
		label = "run"
	}
	fmt.Printf("| run | phase | quiet site flows | flows/s | p50 | p99 | errors | noisy site's answers (count×status) |\n|---|---|---|---|---|---|---|---|\n")
	for _, phase := range []string{"idle", "flooded"} {
		var t *tally
		fctx, stop := context.WithCancel(ctx)
		var fwg sync.WaitGroup
		if phase == "flooded" {
			t = &tally{n: map[string]map[int]int{}}
			noisy.flood(fctx, &fwg, cfg.flood, per, chains, t)
			time.Sleep(time.Second) // the flood reaches full speed
		}
		r, err := quiet.quietFlows(ctx, cfg.quietConc)
		stop()
		fwg.Wait()
		if err != nil {
			return err
		}
		answers := "none"
		if t != nil {
			answers = t.String()
		}
		fmt.Printf("| %s | %s | %d | %.0f | %s | %s | %d | %s |\n", label, phase, r.ops, r.rate, fmtDur(r.p50), fmtDur(r.p99), r.errors, answers)
	}
	return nil
}

// quietFlows runs code flows at b with c workers: a second of warm-up,
// then the measured window.
func (b *bench) quietFlows(ctx context.Context, c int) (*result, error) {
	op := func(w, n int) error {
		_, err := b.flow(w, b.clients[(w+n*c)%len(b.clients)])
		return err
	}
	warm, cancel := context.WithTimeout(ctx, time.Second)
	b.drive(warm, c, op, nil)
	cancel()
	lat := make([][]time.Duration, c)
	var errs atomic.Int64
	mctx, cancel := context.WithTimeout(ctx, b.cfg.duration)
	defer cancel()
	start := time.Now()
	b.drive(mctx, c, op, func(w int, d time.Duration, err error) {
		if err != nil {
			if errs.Add(1) <= 3 {
				fmt.Fprintln(os.Stderr, "quiet site error:", err)
			}
			return
		}
		lat[w] = append(lat[w], d)
	})
	elapsed := time.Since(start)
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	if len(all) == 0 {
		return nil, errors.New("the quiet site completed no flow")
	}
	slices.Sort(all)
	return &result{ops: int64(len(all)), errors: errs.Load(), rate: float64(len(all)) / elapsed.Seconds(),
		p50: all[len(all)/2], p99: all[len(all)*99/100]}, nil
}

var csrfField = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// flood starts per workers of each kind against b until ctx ends.
func (b *bench) flood(ctx context.Context, wg *sync.WaitGroup, kinds []string, per int, chains []*tokens, t *tally) {
	access := chains[0].AccessToken
	on := func(kind string, f func()) {
		if slices.Contains(kinds, kind) {
			wg.Go(f)
		}
	}
	for w := range per {
		on("token", func() { // refresh-token rotation
			c, chain := newConn(b.cfg.target), chains[w]
			client := b.clients[w%len(b.clients)]
			for ctx.Err() == nil {
				resp, err := c.do("POST", b.host, "/api/oauth/token", formHeaders, []byte(url.Values{
					"grant_type": {"refresh_token"}, "refresh_token": {chain.RefreshToken}, "client_id": {client}}.Encode()))
				if err != nil {
					continue
				}
				t.add("token", resp.status)
				if resp.status == http.StatusOK {
					if m := refreshField.FindSubmatch(resp.body); m != nil {
						chain.RefreshToken = string(m[1])
					}
				}
			}
		})
		on("graphql", func() { // the Member API
			c := newConn(b.cfg.target)
			hdr := []string{"Authorization: Bearer " + access, "Content-Type: application/json"}
			for ctx.Err() == nil {
				if resp, err := c.do("POST", b.host, "/member/graphql", hdr, graphqlBody); err == nil {
					t.add("graphql", resp.status)
				}
			}
		})
		on("mcp", func() { // anonymous MCP
			c := newConn(b.cfg.target)
			for ctx.Err() == nil {
				if resp, err := c.do("POST", b.host, "/mcp", mcpHeaders, mcpSearchBody); err == nil {
					t.add("mcp", resp.status)
				}
			}
		})
		on("signin", func() { // sign-ins, each from a loopback address of its own
			c := newConn(b.cfg.target)
			for n := 0; ctx.Err() == nil; n++ {
				c.close()
				c.from = net.IPv4(127, byte(100+w%100), byte(n/250%250), byte(1+n%250))
				page, err := c.do("GET", b.host, "/login", nil, nil)
				if err != nil {
					continue
				}
				m := csrfField.FindSubmatch(page.body)
				if m == nil || len(page.cookies) == 0 {
					t.add("signin", page.status)
					continue
				}
				form := url.Values{"csrf_token": {string(m[1])}, "email": {fmt.Sprintf("flood-%d-%d@example.test", w, n)}, "password": {"not-the-password"}}
				hdr := []string{"Content-Type: application/x-www-form-urlencoded", "Cookie: " + string(page.cookies[0])}
				if resp, err := c.do("POST", b.host, "/login", hdr, []byte(form.Encode())); err == nil {
					t.add("signin", resp.status)
				}
			}
		})
	}
}

var refreshField = regexp.MustCompile(`"refresh_token":"([^"]+)"`)
