package main

import (
	"fmt"
	"io"
	"runtime"
	"time"
)

// printReport prints the Markdown tables of docs/SCALE.md.
func printReport(w io.Writer, cfg *config, rows []*result) {
	fmt.Fprintf(w, "PostgreSQL %s, %d cores shared by server, driver and services; %s per load row at concurrency %d; %s.\n\n",
		map[bool]string{true: "+ Redis", false: "+ in-memory cache"}[cfg.redisURL != ""], runtime.NumCPU(), cfg.duration, cfg.conc,
		time.Now().UTC().Format("2006-01-02"))
	fmt.Fprintln(w, "| sites | import | import rate | start-up to ready | RSS idle | heap idle | RSS touched | heap touched | heap/site touched | RSS after load | load avg |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		perSite := "–"
		if r.touched.heap > r.idle.heap {
			perSite = fmt.Sprintf("%.1f KB", float64(r.touched.heap-r.idle.heap)/float64(r.sites)/1000)
		}
		fmt.Fprintf(w, "| %d | %s | %.0f sites/s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.sites,
			fmtDur(r.importTime), float64(r.sites)/r.importTime.Seconds(), fmtDur(r.startup),
			mib(r.idle.rss), mib(r.idle.heap), mib(r.touched.rss), mib(r.touched.heap), perSite, mib(r.loaded.rss), r.loadAvg)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| sites | scenario | ops/s | p50 | p99 | server CPU/op | errors |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, r := range rows {
		for _, s := range append([]*stats{r.coldDisc, r.coldJWKS}, r.load...) {
			fmt.Fprintf(w, "| %d | %s | %.0f | %s | %s | %s | %d |\n", r.sites, s.name, s.rate, fmtDur(s.p50), fmtDur(s.p99), fmtDur(s.cpuPerOp), s.errors)
		}
	}
}
