package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/lectern/lectern/storage/sqlstore/sqltest"
)

// cli runs lectern with args against one database and returns exit code,
// stdout and stderr.
type cli struct {
	t   *testing.T
	env map[string]string
}

func newCLI(t *testing.T, postgres bool) *cli {
	env := map[string]string{"LECTERN_DATA_DIR": t.TempDir(), "LECTERN_DEMO_SEED": "false"}
	if postgres {
		env["DATABASE_URL"] = sqltest.PostgresSchemaURL(t)
		env["LECTERN_KEK"] = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	}
	c := &cli{t: t, env: env}
	if postgres {
		c.ok("migrate")
	}
	return c
}

func (c *cli) run(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb, func(k string) (string, bool) { v, ok := c.env[k]; return v, ok })
	return code, out.String(), errb.String()
}

func (c *cli) ok(args ...string) string {
	c.t.Helper()
	code, out, errs := c.run(args...)
	if code != 0 {
		c.t.Fatalf("lectern %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

func (c *cli) json(v any, args ...string) {
	c.t.Helper()
	out := c.ok(args...)
	if strings.Count(strings.TrimSpace(out), "\n") != 0 {
		c.t.Fatalf("lectern %s --json printed more than one line:\n%s", strings.Join(args, " "), out)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		c.t.Fatalf("lectern %s: stdout is not one JSON document: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func (c *cli) fails(wantCode int, wantErr string, args ...string) {
	c.t.Helper()
	code, _, errs := c.run(args...)
	if code != wantCode || !strings.Contains(errs, wantErr) {
		c.t.Fatalf("lectern %s: exit %d, stderr %q; want exit %d mentioning %q", strings.Join(args, " "), code, errs, wantCode, wantErr)
	}
}

// eachDatabase runs f as a subtest on the embedded SQLite database and on
// PostgreSQL.
func eachDatabase(t *testing.T, f func(t *testing.T, pg bool)) {
	for _, pg := range []bool{false, true} {
		name := "sqlite"
		if pg {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) { f(t, pg) })
	}
}

func TestCLI(t *testing.T) {
	eachDatabase(t, func(t *testing.T, pg bool) {
		c := newCLI(t, pg)

		var site siteJSON
		c.json(&site, "site", "create", "--slug", "academy", "--name", "Academy", "--origin", "HTTPS://Academy.Example.com/",
			"--alias", "www.academy.example.com", "--variant", "a", "--id-tokens", "--json")
		if site.ID == 0 || site.Origin != "https://academy.example.com" || site.RegistrationVariant != "A" || !site.IDTokensEnabled ||
			len(site.Aliases) != 1 || site.Aliases[0] != "www.academy.example.com" {
			t.Fatalf("created site %+v", site)
		}
		c.fails(1, "conflict", "site", "create", "--slug", "academy", "--name", "Again", "--origin", "https://other.example.com")
		c.fails(1, "origin", "site", "create", "--slug", "bad", "--name", "Bad", "--origin", "https://bad.example.com/path")
		c.fails(1, "variant", "site", "create", "--slug", "bad", "--name", "Bad", "--origin", "https://bad.example.com", "--variant", "C")
		c.fails(1, "slug", "site", "create", "--slug", "Bad Slug", "--name", "Bad", "--origin", "https://bad.example.com")

		var updated siteJSON
		c.json(&updated, "site", "update", "--site", "academy", "--name", "Academy 2", "--id-tokens=false", "--mcp-beta", "--json")
		if updated.Name != "Academy 2" || updated.IDTokensEnabled || !updated.MCPConnectionsBeta || updated.Origin != site.Origin {
			t.Fatalf("updated site %+v", updated)
		}
		var list []siteJSON
		c.json(&list, "site", "list", "--json")
		if len(list) != 1 || list[0].Name != "Academy 2" {
			t.Fatalf("site list %+v", list)
		}

		var user map[string]any
		c.json(&user, "user", "create", "--email", "Ada@Example.com", "--name", "Ada", "--password", "long-enough-pw", "--json")
		if id, _ := user["id"].(string); !strings.HasPrefix(id, "usr_") || user["email"] != "ada@example.com" {
			t.Fatalf("created user %v", user)
		}
		for k := range user {
			if strings.Contains(k, "password") || strings.Contains(k, "hash") {
				t.Fatalf("user output leaks %q", k)
			}
		}
		c.fails(1, "8 characters", "user", "create", "--email", "b@example.com", "--name", "B", "--password", "short")
		c.fails(1, "e-mail", "user", "create", "--email", "not-an-email", "--name", "B", "--password", "long-enough-pw")

		var role map[string]any
		c.json(&role, "role", "grant", "--site", "academy", "--user", "ada@example.com", "--role", "owner", "--json")
		if roles, _ := role["roles"].([]any); len(roles) != 1 || roles[0] != "owner" {
			t.Fatalf("role grant %v", role)
		}
		c.fails(1, "role", "role", "grant", "--site", "academy", "--user", "ada@example.com", "--role", "emperor")
		c.fails(1, "no site", "role", "grant", "--site", "nope", "--user", "ada@example.com", "--role", "owner")

		var key map[string]any
		c.json(&key, "keys", "rotate", "--site", "academy", "--activate-in", "2h", "--json")
		if key["state"] != "next" || key["kid"] == "" || key["alg"] != "ES256" {
			t.Fatalf("rotated key %v", key)
		}
		c.fails(2, "--sessions-per-account (LECTERN_SESSIONS_PER_ACCOUNT) must be between 1 and", "serve", "--sessions-per-account", "0")
		c.fails(2, "--sessions-per-account (LECTERN_SESSIONS_PER_ACCOUNT) must be between 1 and", "serve", "--sessions-per-account", "20000")
		c.fails(2, "unknown command", "frobnicate")
		c.fails(2, "usage", "site")
		if code, _, _ := c.run(); code != 2 {
			t.Fatalf("no arguments: exit %d, want 2", code)
		}
	})
}

func TestCLISeedDemo(t *testing.T) {
	c := newCLI(t, false)
	out := c.ok("seed", "demo", "--port", "9090")
	if !strings.Contains(out, "http://localhost:9090") || !strings.Contains(out, "student@demo.test") {
		t.Fatalf("seed banner:\n%s", out)
	}
	if out := c.ok("seed", "demo", "--port", "9090"); !strings.Contains(out, "exist already") {
		t.Fatalf("second seed: %s", out)
	}
	var list []siteJSON
	c.json(&list, "site", "list", "--json")
	if len(list) != 2 || list[0].Origin != "http://localhost:9090" || list[1].Origin != "http://127.0.0.1:9090" {
		t.Fatalf("demo sites %+v", list)
	}
}

func TestCLIClientsVendorsCIMD(t *testing.T) {
	c := newCLI(t, false)
	c.ok("seed", "demo", "--port", "9191")

	var member clientJSON
	c.json(&member, "client", "create", "--site", "demo-academy", "--name", "Study Buddy", "--redirect-uri", "https://buddy.example/cb", "--json")
	if !strings.HasPrefix(member.ClientID, "lct_") || member.Audience != "member" || member.ClientSecret != "" ||
		member.Scope != "openid profile email account:read account:write" || member.AuthMethod != "none" {
		t.Fatalf("member client %+v", member)
	}
	var conf clientJSON
	c.json(&conf, "client", "create", "--site", "demo-academy", "--name", "Backend", "--redirect-uri", "https://b.example/cb", "--confidential", "--json")
	if !strings.HasPrefix(conf.ClientSecret, "lcs_") || conf.AuthMethod != "client_secret_post" || conf.ResourceServer {
		t.Fatalf("confidential client %+v", conf)
	}
	// A resource server may introspect every client's access tokens (the
	// benchmark's introspecting client is one).
	var rs clientJSON
	c.json(&rs, "client", "create", "--site", "demo-academy", "--name", "API", "--redirect-uri", "https://b.example/cb", "--confidential", "--resource-server", "--json")
	if !rs.ResourceServer || rs.ClientSecret == "" {
		t.Fatalf("resource server %+v", rs)
	}
	c.fails(1, "confidential", "client", "create", "--site", "demo-academy", "--name", "X", "--redirect-uri", "https://x.example/cb", "--resource-server")
	c.fails(1, "invalid_redirect_uri", "client", "create", "--site", "demo-academy", "--name", "X", "--redirect-uri", "http://example.com/cb")
	c.fails(1, "member", "client", "create", "--site", "demo-academy", "--name", "X", "--redirect-uri", "https://x.example/cb", "--scope", "courses:read")
	c.fails(1, "redirect_uris", "client", "create", "--site", "demo-academy", "--name", "X")

	var vendor struct {
		clientJSON
		ClientNames []string `json:"client_names"`
	}
	c.json(&vendor, "vendor", "add", "--name", "Course Pilot", "--client-name", "CoursePilot", "--redirect-uri", "http://127.0.0.1/cb", "--json")
	if !strings.HasPrefix(vendor.ClientID, "vnd_") || vendor.Audience != "operator" || len(vendor.ClientNames) != 1 || vendor.ClientNames[0] != "CoursePilot" {
		t.Fatalf("vendor %+v", vendor)
	}
	c.fails(1, "vendor platforms are operator clients", "vendor", "add", "--name", "Bad", "--redirect-uri", "http://127.0.0.1/cb", "--scope", "account:read")

	var allowed map[string]any
	c.json(&allowed, "cimd", "allow", "--host", "Tools.Example.COM", "--site", "demo-academy", "--reviewed", "--json")
	if allowed["host"] != "tools.example.com" || allowed["reviewed"] != true || allowed["site_id"] == nil {
		t.Fatalf("cimd allow %v", allowed)
	}
	c.json(&allowed, "cimd", "allow", "--host", "agents.example.org", "--json")
	if allowed["site_id"] != nil || allowed["reviewed"] != false {
		t.Fatalf("platform-wide cimd allow %v", allowed)
	}
	c.fails(1, "host", "cimd", "allow", "--host", "bad host")
}

// An unreachable Redis at start is an error that says so, for serve and for
// every command that opens the app, never a panic on the way out.
func TestCLIRedisUnreachableAtStart(t *testing.T) {
	c := newCLI(t, false)
	c.env["REDIS_URL"] = "redis://127.0.0.1:1/0"
	c.fails(1, "redis", "site", "list", "--json")
	c.env["REDIS_URL"] = "redis://127.0.0.1:1/0?bad={"
	if code, _, errs := c.run("site", "list"); code == 0 || strings.Contains(errs, "panic") {
		t.Fatalf("a malformed REDIS_URL: exit %d, %s", code, errs)
	}
}

// The provider sets a site's limits with site update --limit (any value;
// name= hands one back to the operators); unknown names and values that
// are not positive whole numbers are refused, and nothing changes.
func TestSiteUpdateLimits(t *testing.T) {
	c := newCLI(t, false)
	c.ok("site", "create", "--slug", "academy", "--name", "Academy", "--origin", "https://academy.example.com")
	var site siteJSON
	c.json(&site, "site", "update", "--site", "academy", "--limit", "token_per_client=5000", "--limit", "mcp_requests_per_site=2", "--json")
	if site.Limits["token_per_client"] != 5000 || site.Limits["mcp_requests_per_site"] != 2 || len(site.OperatorLimits) != 0 {
		t.Fatalf("limits after update: %v (operators %v)", site.Limits, site.OperatorLimits)
	}
	var after siteJSON
	c.json(&after, "site", "update", "--site", "academy", "--limit", "mcp_requests_per_site=", "--json")
	if len(after.Limits) != 1 || after.Limits["token_per_client"] != 5000 {
		t.Fatalf("after handing one back: %v", after.Limits)
	}
	c.fails(1, "no such limit", "site", "update", "--site", "academy", "--limit", "nonsense=3")
	c.fails(1, "between 1 and", "site", "update", "--site", "academy", "--limit", "token_per_client=0")
	c.fails(1, "not a whole number", "site", "update", "--site", "academy", "--limit", "token_per_client=lots")
	c.fails(1, "want name=value", "site", "update", "--site", "academy", "--limit", "token_per_client")
	var sites []siteJSON
	c.json(&sites, "site", "list", "--json")
	if len(sites) != 1 || len(sites[0].Limits) != 1 || sites[0].Limits["token_per_client"] != 5000 {
		t.Fatalf("site list after refused updates: %+v", sites)
	}
}
