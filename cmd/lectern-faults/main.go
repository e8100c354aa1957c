package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/lectern/lectern/internal/redistest"
)

func main() {
	var (
		bin, only, out, nginxCfg string
		short, keep              bool
	)
	flag.StringVar(&bin, "bin", "bin/lectern", "the lectern binary to run (make faults builds it)")
	flag.StringVar(&only, "scenarios", "", "comma-separated scenario names (default: all, or the short subset with --short)")
	flag.BoolVar(&short, "short", false, "run the CI subset")
	flag.StringVar(&out, "out", "", "also write the Markdown table to this file")
	flag.StringVar(&nginxCfg, "nginx-conf", "deploy/nginx/lectern.conf", "the nginx site configuration the rolling restart runs")
	flag.BoolVar(&keep, "keep", false, "keep the temporary directory (logs of every process)")
	flag.Parse()

	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := 1
	defer func() {
		cancel()
		stopAll()
		os.Exit(code)
	}()
	if err := checkTools(); err != nil {
		fmt.Fprintln(os.Stderr, "lectern-faults:", err)
		return
	}
	var selected []*scenario
	for _, s := range scenarios() {
		switch {
		case only != "":
			if containsName(only, s.name) {
				selected = append(selected, s)
			}
		case short:
			if s.short {
				selected = append(selected, s)
			}
		default:
			selected = append(selected, s)
		}
	}
	if len(selected) == 0 {
		fmt.Fprintln(os.Stderr, "lectern-faults: no scenario selected")
		return
	}
	dir, err := os.MkdirTemp("", "lectern-faults-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "lectern-faults:", err)
		return
	}
	// PostgreSQL runs as another user when the driver is root: it must
	// reach its data directory.
	_ = os.Chmod(dir, 0o755)
	if !keep {
		defer os.RemoveAll(dir)
	} else {
		fmt.Fprintln(os.Stderr, "logs in", dir)
	}
	absBin, _ := filepath.Abs(bin)
	absConf, _ := filepath.Abs(nginxCfg)
	r := &run{bin: absBin, nginxCfg: absConf, dir: dir, kek: randomKEK()}
	t0 := time.Now()
	fmt.Fprintln(os.Stderr, "building the template database (initdb, migrate, seed, bench clients)")
	if err := r.buildTemplate(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "lectern-faults: template:", err)
		return
	}
	fmt.Fprintf(os.Stderr, "template ready in %.1f s\n", time.Since(t0).Seconds())
	var results []*result
	for _, s := range selected {
		if ctx.Err() != nil {
			break
		}
		fmt.Fprintf(os.Stderr, "== %s: %s\n", s.name, s.fault)
		res := r.runScenario(ctx, s)
		results = append(results, res)
		status := "held"
		if res.err != nil {
			status = "ERROR: " + res.err.Error()
		} else if !res.held {
			status = "VIOLATED: " + strings.Join(res.violations, "; ")
		}
		fmt.Fprintf(os.Stderr, "   %s in %.1f s; %s\n   %s\n", status, res.took.Seconds(), res.note, res.outcomes)
	}
	table := report(results, short, time.Since(t0))
	fmt.Print(table)
	if out != "" {
		if err := os.WriteFile(out, []byte(table), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "lectern-faults:", err)
			return
		}
	}
	code = 0
	for _, res := range results {
		if res.err != nil || !res.held {
			code = 1
		}
	}
	if len(results) < len(selected) {
		code = 1
	}
}

func containsName(list, name string) bool {
	for _, n := range strings.Split(list, ",") {
		if strings.TrimSpace(n) == name {
			return true
		}
	}
	return false
}

func checkTools() error {
	if err := redistest.Available(); err != nil {
		return err
	}
	for _, p := range []string{filepath.Join(pgBin, "initdb"), filepath.Join(pgBin, "postgres"), nginxBin} {
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("%s not found (apt-get install postgresql-15 nginx)", p)
		}
	}
	return nil
}

func randomKEK() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// report is the Markdown table of the run.
func report(results []*result, short bool, took time.Duration) string {
	var b strings.Builder
	cmd := "make faults"
	if short {
		cmd = "make faults-short"
	}
	fmt.Fprintf(&b, "`%s` on %s, %.0f s in all. Recovery: from the end of the fault (for a failover: the kill) to the last failed request.\n\n",
		cmd, time.Now().UTC().Format("2006-01-02 15:04 UTC"), took.Seconds())
	fmt.Fprintln(&b, "| scenario | load | fault | requests by outcome | invariant held | recovery |")
	fmt.Fprintln(&b, "|---|---|---|---|---|---|")
	for _, r := range results {
		held := "yes"
		switch {
		case r.err != nil:
			held = "error: " + r.err.Error()
		case !r.held:
			held = "**no**: " + strings.Join(r.violations, "; ")
		}
		fault := r.fault
		if r.note != "" {
			fault += " (" + r.note + ")"
		}
		outcomes := r.outcomes
		if r.total > 0 {
			outcomes = fmt.Sprintf("%d requests, %d as expected: %s", r.total, r.ok, r.outcomes)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", r.name, esc(r.load), esc(fault), esc(outcomes), esc(held), r.recovery)
	}
	return b.String()
}

func esc(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}
