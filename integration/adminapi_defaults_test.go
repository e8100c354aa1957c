package integration

import (
	"net/http"
	"testing"
	"time"
)

// Where a rule spans two fields, which a schema cannot state, the later
// field has a default (docs/decisions.md, issue 13): an event without
// endsAt lasts an hour; an analytics period without bounds is the last 30
// days. Given, the bounds are still checked.
func TestAdminDefaultsForTwoFieldRules(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	tok := admOwnerToken(t, ts, ts.academy(), "events:write", "analytics:read")
	ev := admDo(t, ts, http.MethodPost, ts.academy(), "/events", tok,
		map[string]any{"slug": "one-hour", "title": "One hour", "startsAt": "2099-03-01T10:00:00Z"}).want(t, http.StatusCreated, "event without endsAt").obj(t)
	if ev["endsAt"] != "2099-03-01T11:00:00Z" {
		t.Errorf("endsAt %v; want an hour after startsAt", ev["endsAt"])
	}
	admProblem(t, admDo(t, ts, http.MethodPost, ts.academy(), "/events", tok,
		map[string]any{"slug": "backwards", "title": "Backwards", "startsAt": "2099-03-01T10:00:00Z", "endsAt": "2099-03-01T09:00:00Z"}), 422, "endsAt", "an event that ends before it starts")

	for _, path := range []string{"/analytics/sales", "/analytics/enrollments"} {
		sum := admDo(t, ts, http.MethodGet, ts.academy(), path, tok, nil).want(t, http.StatusOK, path+" without a period").obj(t)
		from, err1 := time.Parse(time.RFC3339, sum["from"].(string))
		to, err2 := time.Parse(time.RFC3339, sum["to"].(string))
		if err1 != nil || err2 != nil || to.Sub(from) != 30*24*time.Hour || time.Since(to) > time.Minute || time.Since(to) < -time.Minute {
			t.Errorf("%s: period %v – %v; want the 30 days up to now", path, sum["from"], sum["to"])
		}
	}
	sum := admDo(t, ts, http.MethodGet, ts.academy(), "/analytics/sales?to=2026-02-01T00:00:00Z", tok, nil).want(t, http.StatusOK, "sales with to only").obj(t)
	if sum["from"] != "2026-01-02T00:00:00Z" {
		t.Errorf("from %v; want 30 days before to", sum["from"])
	}
}
