package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/sqlstore"
)

// The CLI's changes to a site are in the site's audit log, by the actor
// "cli", as the admin area's and the admin API's are: the site's creation
// and changes, a client, a role, a signing key.
func TestCLIWritesAreAudited(t *testing.T) {
	eachDatabase(t, func(t *testing.T, pg bool) {
		c := newCLI(t, pg)
		var site siteJSON
		c.json(&site, "site", "create", "--slug", "audited", "--name", "Audited", "--origin", "https://audited.example.test", "--json")
		c.ok("site", "update", "--site", "audited", "--mcp-beta", "--limit", "token_per_client=120")
		var client clientJSON
		c.json(&client, "client", "create", "--site", "audited", "--name", "CLI audit client", "--redirect-uri", "https://cli.example.com/cb", "--confidential", "--json")
		c.ok("user", "create", "--email", "ada@example.test", "--name", "Ada", "--password", "correct horse battery")
		var role struct {
			UserID string `json:"user_id"`
		}
		c.json(&role, "role", "grant", "--site", "audited", "--user", "ada@example.test", "--role", "lecturer", "--json")
		c.ok("role", "revoke", "--site", "audited", "--user", "ada@example.test", "--role", "lecturer")
		var key struct {
			KID string `json:"kid"`
		}
		c.json(&key, "keys", "rotate", "--site", "audited", "--activate-in", "1h", "--json")

		url := c.env["DATABASE_URL"]
		if url == "" {
			url = "sqlite:" + filepath.Join(c.env["LECTERN_DATA_DIR"], "lectern.db")
		}
		s, err := sqlstore.Open(context.Background(), url, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		events, err := s.ListAudit(context.Background(), site.ID, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]storage.AuditEvent{}
		for _, e := range events {
			if e.Actor != cliActor {
				t.Errorf("event %s by %q; want %q", e.Action, e.Actor, cliActor)
			}
			got[e.Action] = e
		}
		for action, target := range map[string]string{
			"site.created":   "site",
			"site.updated":   "site",
			"client.created": client.ClientID,
			"role.granted":   "user:" + role.UserID,
			"role.revoked":   "user:" + role.UserID,
			"key.rotated":    key.KID,
		} {
			e, ok := got[action]
			if !ok {
				t.Errorf("no %s event among %d: %+v", action, len(events), events)
				continue
			}
			if e.Target != target {
				t.Errorf("%s targets %q; want %q", action, e.Target, target)
			}
		}
		if e := got["key.rotated"]; e.Details["replaces"] == "" || e.Details["activates_at"] == "" {
			t.Errorf("key.rotated details %v; want the key it replaces and when it signs", e.Details)
		}
		if e := got["role.granted"]; e.Details["role"] != "lecturer" {
			t.Errorf("role.granted details %v; want the role", e.Details)
		}
	})
}
