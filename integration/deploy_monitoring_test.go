package integration

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// lecternMetric finds our metric names in a PromQL expression.
var lecternMetric = regexp.MustCompile(`\blectern_[a-z_]+`)

// monitoringExprs returns every PromQL expression of the alert rules and
// the Grafana dashboard, named by where it is.
func monitoringExprs(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	raw, err := os.ReadFile(filepath.Join(deployRoot, "prometheus", "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct{ Alert, Expr string }
		}
	}
	if err := yaml.Unmarshal(raw, &rules); err != nil {
		t.Fatalf("alerts.yml: %v", err)
	}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			out["alert "+r.Alert] = r.Expr
		}
	}
	raw, err = os.ReadFile(filepath.Join(deployRoot, "grafana", "lectern.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("lectern.json: %v", err)
	}
	for _, p := range dash.Panels {
		for i, tg := range p.Targets {
			out["panel "+p.Title+" #"+string(rune('A'+i))] = tg.Expr
		}
	}
	return out
}

// TestMonitoringUsesExistingMetrics: every lectern_* metric the alerts and
// the dashboard query is one a running server exposes (a renamed metric
// would silence an alert without a word), and with promtool at hand the
// rules pass its check and their unit tests.
func TestMonitoringUsesExistingMetrics(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	code, _, body := startOps(t, ts).get(t, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	exposed := map[string]bool{}
	for _, line := range strings.Split(string(body), "\n") {
		if name, ok := strings.CutPrefix(line, "# TYPE "); ok {
			f := strings.Fields(name)
			exposed[f[0]] = true
			if f[1] == "histogram" {
				for _, s := range []string{"_bucket", "_sum", "_count"} {
					exposed[f[0]+s] = true
				}
			}
		}
	}
	exprs := monitoringExprs(t)
	if len(exprs) < 10 {
		t.Fatalf("found %d expressions; the alert or dashboard file lost its content", len(exprs))
	}
	for where, expr := range exprs {
		for _, m := range lecternMetric.FindAllString(expr, -1) {
			if !exposed[m] {
				t.Errorf("%s queries %s, which /metrics does not expose", where, m)
			}
		}
	}

	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("LECTERN_REQUIRE_SERVICES") == "1" {
			t.Fatal("promtool is not installed (apt-get install prometheus)")
		}
		t.Skip("promtool not installed")
	}
	dir := filepath.Join(deployRoot, "prometheus")
	for _, args := range [][]string{{"check", "rules", "alerts.yml"}, {"test", "rules", "alerts_test.yml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	// The dashboard's queries parse: promtool checks them as recording rules.
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range exprs {
			if strings.HasPrefix(k, "panel ") && !yield(k) {
				return
			}
		}
	})
	for i, k := range names {
		q, _ := json.Marshal(exprs[k])
		rules.WriteString("      - record: dashboard:q" + string(rune('a'+i%26)) + strings.Repeat("x", i/26) + "\n        expr: " + string(q) + "\n")
	}
	file := filepath.Join(t.TempDir(), "dashboard-rules.yml")
	if err := os.WriteFile(file, []byte(rules.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "rules", file).CombinedOutput(); err != nil {
		t.Errorf("the dashboard's queries do not parse: %v\n%s", err, out)
	}
}
