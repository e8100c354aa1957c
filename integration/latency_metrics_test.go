package integration

import (
	"regexp"
	"strconv"
	"testing"

	"golang.org/x/oauth2"

	"github.com/lectern/lectern/internal/demo"
)

// The metrics listener says how long requests waited on Redis and on the
// batched database writes (issue 17's tail): every code exchange waits on
// one grant batch, every refresh on one rotation batch, and the flows'
// Redis commands (the authorization code's SET, GET and DEL, the session's
// read) are timed. The embedded default batches nothing and has no Redis:
// it exports neither histogram.
func TestDependencyLatencyMetrics(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		ops := startOps(t, ts)
		const flows, refreshes = 3, 2
		var tok *oauth2.Token
		for range flows {
			tok = ts.studentToken(t, ts.academy())
		}
		f := newFlow(t, ts, ts.academy(), demo.MemberClientID)
		for range refreshes {
			next, err := f.conf.TokenSource(f.ctx, &oauth2.Token{RefreshToken: tok.RefreshToken}).Token()
			if err != nil {
				t.Fatalf("refresh: %v", err)
			}
			tok = next
		}
		_, _, body := ops.get(t, "/metrics")
		metrics := string(body)
		value := func(series string) (float64, bool) {
			m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(metrics)
			if m == nil {
				return 0, false
			}
			v, err := strconv.ParseFloat(m[1], 64)
			if err != nil {
				t.Fatalf("%s: %v", series, err)
			}
			return v, true
		}
		if b.redisURL == "" {
			if regexp.MustCompile(`lectern_redis_command_duration_seconds|lectern_db_batch_wait_seconds`).MatchString(metrics) {
				t.Fatalf("latency histograms on the embedded default:\n%s", grepLines(metrics, "lectern_"))
			}
			return
		}
		for batch, want := range map[string]float64{"grants": flows, "rotations": refreshes} {
			count, ok := value(`lectern_db_batch_wait_seconds_count{batch="` + batch + `"}`)
			inf, _ := value(`lectern_db_batch_wait_seconds_bucket{batch="` + batch + `",le="+Inf"}`)
			sum, _ := value(`lectern_db_batch_wait_seconds_sum{batch="` + batch + `"}`)
			if !ok || count != want || inf != want || sum <= 0 {
				t.Errorf("%s batch: count %v, +Inf bucket %v, sum %v; want %v waits:\n%s", batch, count, inf, sum, want, grepLines(metrics, "lectern_db_batch_wait_seconds"))
			}
		}
		count, _ := value("lectern_redis_command_duration_seconds_count")
		inf, _ := value(`lectern_redis_command_duration_seconds_bucket{le="+Inf"}`)
		sum, _ := value("lectern_redis_command_duration_seconds_sum")
		// Each flow stores its code and takes it back at least.
		if count < 2*flows || inf != count || sum <= 0 {
			t.Errorf("redis commands: count %v, +Inf bucket %v, sum %v; want at least %d:\n%s", count, inf, sum, 2*flows, grepLines(metrics, "lectern_redis_command_duration_seconds"))
		}
	})
}
