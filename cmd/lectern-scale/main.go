package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// config is the run's settings.
type config struct {
	bin        string
	adminURL   string
	redisURL   string
	port       int
	counts     []int
	duration   time.Duration
	conc       int
	flowSites  int
	cold       int
	profileDir string
	keep       bool
}

func main() {
	var cfg config
	var counts string
	flag.StringVar(&cfg.bin, "bin", "bin/lectern", "the lectern binary to measure")
	flag.StringVar(&cfg.adminURL, "admin-url", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable",
		"PostgreSQL URL of a database from which fresh databases (lectern_scale_<pid>_<count>) are created and dropped")
	flag.StringVar(&cfg.redisURL, "redis-url", "", "Redis URL for the server (a key prefix of its own); empty: in-memory cache")
	flag.IntVar(&cfg.port, "port", 29180, "loopback port of the server (and port+1 for its pprof listener)")
	flag.StringVar(&counts, "counts", "10,1000,10000", "comma-separated site counts")
	flag.DurationVar(&cfg.duration, "duration", 5*time.Second, "measured time per load scenario (at most 60s)")
	flag.IntVar(&cfg.conc, "concurrency", 4, "concurrent clients in the load runs")
	flag.IntVar(&cfg.flowSites, "flow-sites", 32, "sites (chosen at random) with a user and client for the code flow and userinfo")
	flag.IntVar(&cfg.cold, "cold", 200, "cold sites whose first request is timed")
	flag.StringVar(&cfg.profileDir, "profile-dir", "", "write heap profiles of the server (idle, touched) here")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the databases (default: drop each after its run)")
	flag.Parse()
	for _, c := range strings.Split(counts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || n < 1 || n > 1_000_000 {
			fatal("bad --counts %q", counts)
		}
		cfg.counts = append(cfg.counts, n)
	}
	if cfg.port < 1024 || cfg.port > 65534 {
		fatal("bad --port")
	}
	cfg.duration = min(cfg.duration, time.Minute)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var rows []*result
	for _, n := range cfg.counts {
		fmt.Fprintf(os.Stderr, "== %d sites\n", n)
		r, err := runCount(ctx, &cfg, n)
		if err != nil {
			fatal("%d sites: %v", n, err)
		}
		rows = append(rows, r)
	}
	printReport(os.Stdout, &cfg, rows)
}

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "lectern-scale: "+format+"\n", args...)
	os.Exit(1)
}
