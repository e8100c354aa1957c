package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"
)

// stats summarises one measured scenario.
type stats struct {
	name     string
	ops      int
	errors   int
	rate     float64
	p50, p99 time.Duration
	// cpuPerOp is the server's CPU time divided by the operations.
	cpuPerOp time.Duration
	firstErr error
}

// loopbackClient sends every request to target whatever the URL's host,
// so each site is addressed by its Host header.
func loopbackClient(target string) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second}
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return d.DialContext(ctx, network, target)
			},
			MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// get fetches path at site i and wants 200. The URL names the listener
// and the Host header the site: net/http pools connections by URL host,
// and one pool per site would open a connection for nearly every request
// spread over thousands of sites (what a proxy in front of the fleet does
// not do either).
func (r *run) get(i int, path string) error {
	req, err := http.NewRequest(http.MethodGet, "http://"+r.target+path, nil)
	if err != nil {
		return err
	}
	req.Host = r.host(i)
	resp, err := r.http.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s%s: %d", r.host(i), path, resp.StatusCode)
	}
	return nil
}

// sequential times one request to each of sites, one after the other.
func (r *run) sequential(name string, sites []int, path string) *stats {
	lat := make([]time.Duration, 0, len(sites))
	s := &stats{name: name}
	cpu0, t0 := r.cpuTime(), time.Now()
	for _, i := range sites {
		start := time.Now()
		if err := r.get(i, path); err != nil {
			s.errors++
			s.firstErr = cmpErr(s.firstErr, err)
			continue
		}
		lat = append(lat, time.Since(start))
	}
	s.finish(lat, time.Since(t0), r.cpuTime()-cpu0)
	report(s)
	return s
}

// touchAll sends discovery and JWKS to every site, on cfg.conc workers.
func (r *run) touchAll(ctx context.Context, sites []int) error {
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	next := make(chan int)
	for range r.cfg.conc {
		wg.Go(func() {
			for i := range next {
				for _, p := range []string{discoveryPath, jwksPath} {
					if err := r.get(i, p); err != nil {
						mu.Lock()
						firstErr = cmpErr(firstErr, err)
						mu.Unlock()
					}
				}
			}
		})
	}
	for _, i := range sites {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return fmt.Errorf("touching every site: %w", firstErr)
	}
	return ctx.Err()
}

// measure runs op on cfg.conc workers for cfg.duration.
func (r *run) measure(ctx context.Context, name string, op func(rng *rand.Rand) error) *stats {
	s := &stats{name: name}
	var (
		mu  sync.Mutex
		lat []time.Duration
		wg  sync.WaitGroup
	)
	deadline := time.Now().Add(r.cfg.duration)
	cpu0, t0 := r.cpuTime(), time.Now()
	for w := range r.cfg.conc {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			var mine []time.Duration
			errs := 0
			var first error
			for time.Now().Before(deadline) && ctx.Err() == nil {
				start := time.Now()
				if err := op(rng); err != nil {
					errs++
					first = cmpErr(first, err)
					continue
				}
				mine = append(mine, time.Since(start))
			}
			mu.Lock()
			lat = append(lat, mine...)
			s.errors += errs
			s.firstErr = cmpErr(s.firstErr, first)
			mu.Unlock()
		})
	}
	wg.Wait()
	s.finish(lat, time.Since(t0), r.cpuTime()-cpu0)
	report(s)
	return s
}

func (s *stats) finish(lat []time.Duration, elapsed, cpu time.Duration) {
	s.ops = len(lat)
	if s.ops == 0 {
		return
	}
	slices.Sort(lat)
	s.p50 = lat[len(lat)/2]
	s.p99 = lat[min(len(lat)-1, len(lat)*99/100)]
	s.rate = float64(s.ops) / elapsed.Seconds()
	s.cpuPerOp = cpu / time.Duration(s.ops+s.errors)
}

func report(s *stats) {
	fmt.Fprintf(os.Stderr, "  %-40s %7d ops %8.0f/s  p50 %-9s p99 %-9s cpu/op %-9s errors %d\n",
		s.name, s.ops, s.rate, fmtDur(s.p50), fmtDur(s.p99), fmtDur(s.cpuPerOp), s.errors)
	if s.firstErr != nil {
		fmt.Fprintf(os.Stderr, "    first error: %v\n", s.firstErr)
	}
}

func cmpErr(cur, err error) error {
	if cur != nil {
		return cur
	}
	return err
}

func fmtDur(d time.Duration) string {
	switch {
	case d == 0:
		return "–"
	case d < time.Millisecond:
		return fmt.Sprintf("%d µs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000)
	default:
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
}
