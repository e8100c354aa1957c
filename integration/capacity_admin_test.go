package integration

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/limits"
	"github.com/lectern/lectern/vocab"
)

type siteLimit struct {
	Name          string `json:"name"`
	Default       int    `json:"default"`
	Max           int    `json:"max"`
	Value         int    `json:"value"`
	Override      *int   `json:"override"`
	SetByProvider bool   `json:"setByProvider"`
	PeriodSeconds int    `json:"periodSeconds"`
}

func limitsByName(t *testing.T, r admResp) map[string]siteLimit {
	t.Helper()
	var doc struct {
		Limits []siteLimit `json:"limits"`
	}
	r.json(t, &doc)
	out := map[string]siteLimit{}
	for _, l := range doc.Limits {
		out[l.Name] = l
	}
	if len(out) != len(limits.All) {
		t.Fatalf("GET /limits lists %d limits, want %d: %s", len(out), len(limits.All), r.body)
	}
	return out
}

// Operators read their site's limits (school:read) and set their own
// values (school:write) up to the platform's ceiling; sign-in limits only
// downwards; never one the provider set. The values take effect at the
// site (here: registrations per address) and show in /auth.md.
func TestOperatorsSetTheirSiteLimits(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, withLimits(map[limits.Name]int{limits.RegisterPerIP: 10}))
		setProviderLimits(t, ts, demo.OpenSlug, map[string]int{string(limits.MCPRequestsPerSite): 7})
		read := admOwnerToken(t, ts, ts.open(), "school:read")
		write := admOwnerToken(t, ts, ts.open(), "school:write")

		admInsufficientScope(t, admDo(t, ts, http.MethodPut, ts.open(), "/limits", read, map[string]any{"overrides": map[string]int{}}), "school:write", "PUT with school:read")
		got := limitsByName(t, admDo(t, ts, http.MethodGet, ts.open(), "/limits", read, nil).want(t, 200, "GET /limits"))
		if l := got["register_per_ip"]; l.Default != 10 || l.Max != 100 || l.Value != 10 || l.Override != nil || l.SetByProvider || l.PeriodSeconds != 60 {
			t.Fatalf("register_per_ip: %+v", l)
		}
		if l := got["login_failures_per_account_ip"]; l.Max != l.Default {
			t.Fatalf("a sign-in limit's max is %d, its default %d: operators could loosen a platform-wide protection", l.Max, l.Default)
		}
		if l := got["mcp_requests_per_site"]; !l.SetByProvider || l.Value != 7 {
			t.Fatalf("the provider's limit: %+v", l)
		}

		for _, c := range []struct {
			name  string
			value int
		}{{"register_per_ip", 101}, {"login_failures_per_account_ip", 11}, {"mcp_requests_per_site", 8}, {"no_such_limit", 5}, {"token_per_client", 0}} {
			r := admDo(t, ts, http.MethodPut, ts.open(), "/limits", write, map[string]any{"overrides": map[string]int{c.name: c.value}})
			if c.value == 0 {
				// The document's minimum: refused before the handler.
				if r.status != http.StatusBadRequest && r.status != http.StatusUnprocessableEntity {
					t.Fatalf("%s=0: %d %s", c.name, r.status, r.body)
				}
				continue
			}
			admProblem(t, r, http.StatusUnprocessableEntity, "overrides."+c.name, c.name)
		}

		r := admDo(t, ts, http.MethodPut, ts.open(), "/limits", write, map[string]any{"overrides": map[string]int{"register_per_ip": 2, "login_failures_per_account_ip": 5}})
		got = limitsByName(t, r.want(t, 200, "PUT /limits"))
		if l := got["register_per_ip"]; l.Value != 2 || l.Override == nil || *l.Override != 2 {
			t.Fatalf("after PUT: %+v", l)
		}
		// Registrations per address at Open School follow the operators'
		// value once the change reaches the server's copy of the site.
		body := mustJSON(map[string]any{"client_name": "Limits", "redirect_uris": []string{"http://127.0.0.1:9/cb"}})
		eventually(t, 10*time.Second, func() error {
			c := ts.clientFrom(nextSourceIP())
			for range 2 {
				if status, _, _ := ts.register(t, c, ts.open(), "application/json", body); status != http.StatusCreated {
					return errStatus(status)
				}
			}
			if status, _, _ := ts.register(t, c, ts.open(), "application/json", body); status != http.StatusTooManyRequests {
				return errStatus(status)
			}
			return nil
		})
		_, _, md := ts.get(t, ts.open(), vocab.AuthMDPath)
		if !strings.Contains(string(md), "| Client registrations | 2 per minute per IP address at this site |") {
			t.Fatalf("/auth.md does not show the site's registration limit:\n%s", md)
		}
		// An empty set hands every limit back to the platform default.
		got = limitsByName(t, admDo(t, ts, http.MethodPut, ts.open(), "/limits", write, map[string]any{"overrides": map[string]int{}}).want(t, 200, "PUT {}"))
		if l := got["register_per_ip"]; l.Value != 10 || l.Override != nil {
			t.Fatalf("after PUT {}: %+v", l)
		}
		_, open := admSites(t, ts)
		found := false
		for _, e := range admAudit(t, ts, *open) {
			found = found || e.Action == "limits.updated"
		}
		if !found {
			t.Fatal("no limits.updated audit event")
		}
	})
}

// The admin area's Settings page shows every limit and lets an owner set
// the site's values within the ceiling; a value beyond it is refused with
// the field marked, nothing saved; a limit the provider set is read-only.
func TestSettingsPageSetsLimits(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		setProviderLimits(t, ts, demo.AcademySlug, map[string]int{string(limits.MCPRequestsPerSite): 7})
		owner := webSignIn(t, ts, ts.academy(), demo.OwnerEmail, demo.OwnerPassword)
		v := owner.form("/admin/settings", "limits-form", nil)
		if _, ok := v["limit_token_per_client"]; !ok {
			t.Fatalf("the limits form has no token_per_client field: %v", v)
		}
		if _, ok := v["limit_mcp_requests_per_site"]; ok {
			t.Fatal("a limit the provider set can be changed on the form")
		}
		v.Set("limit_token_per_client", "301")
		page := owner.expectPost("/admin/settings/limits", v, http.StatusUnprocessableEntity)
		if !webHasID(t, page.Body, "limit-token_per_client-error") || !strings.Contains(page.Body, "between 1 and 300") {
			t.Fatalf("a value over the ceiling: no error on its field\n%s", webExcerpt(page.Body))
		}
		academy, _ := admSites(t, ts)
		if academy.OperatorLimits() != nil {
			t.Fatalf("a refused form changed the site: %v", academy.OperatorLimits())
		}
		v.Set("limit_token_per_client", "45")
		v.Set("limit_login_failures_per_account_ip", "5")
		owner.expectPost("/admin/settings/limits", v, http.StatusSeeOther)
		academy, _ = admSites(t, ts)
		if got := academy.OperatorLimits(); got["token_per_client"] != 45 || got["login_failures_per_account_ip"] != 5 || len(got) != 2 {
			t.Fatalf("stored operator limits %v", got)
		}
		if got := academy.ProviderLimits(); got["mcp_requests_per_site"] != 7 {
			t.Fatalf("the provider's limit was lost: %v", got)
		}
		page = owner.expect("/admin/settings", http.StatusOK)
		if webTextByID(t, page.Body, "limit-token_per_client-value") != "45" {
			t.Fatalf("the page does not show the value in force\n%s", webExcerpt(page.Body))
		}
		// Lecturers do not see Settings.
		lecturer := webSignIn(t, ts, ts.academy(), demo.LecturerEmail, demo.LecturerPassword)
		lecturer.expectPost("/admin/settings/limits", url.Values{"csrf_token": {lecturer.csrf()}, "limit_token_per_client": {"300"}}, http.StatusForbidden)
	})
}

// A limit's value of the wrong type is named as the other refusals name it
// (overrides.<name>) and called what it is not: an integer (1.5 and
// 99999999999999999999 are numbers). A name given twice is named so too.
func TestLimitOverridesOfTheWrongType(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	write := admOwnerToken(t, ts, ts.open(), "school:write")
	for _, c := range []struct{ body, field, message string }{
		{`{"overrides":{"token_per_client":1.5}}`, "overrides.token_per_client", "must be an integer"},
		{`{"overrides":{"register_per_ip":5,"token_per_client":99999999999999999999}}`, "overrides.token_per_client", "must be an integer"},
		{`{"overrides":{"token_per_client":"5"}}`, "overrides.token_per_client", "must be an integer"},
		{`{"overrides":{"token_per_client":5,"token_per_client":6}}`, "overrides.token_per_client", "is given more than once"},
	} {
		p := admProblem(t, admDo(t, ts, http.MethodPut, ts.open(), "/limits", write, []byte(c.body)), http.StatusBadRequest, c.field, c.body)
		errs, _ := p["errors"].([]any)
		if len(errs) != 1 || errs[0].(map[string]any)["message"] != c.message {
			t.Fatalf("%s: errors %v, want %s %q", c.body, errs, c.field, c.message)
		}
	}
}
