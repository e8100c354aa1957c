package main

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lectern/lectern/session"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/cache"
	"github.com/lectern/lectern/storage/sqlstore"
	"github.com/lectern/lectern/storage/storagetest"
)

// The provider's support lists an account's second factors at every site
// and removes the lost or stolen ones (audit V, finding 1: a password reset
// leaves them in place, and nothing else removed them): only the factors
// asked for go, the account's sessions end, each removal is in the audit
// log of its site by "cli", and the account is mailed.
func TestUserRemoveFactors(t *testing.T) {
	eachDatabase(t, func(t *testing.T, pg bool) {
		ctx := context.Background()
		c := newCLI(t, pg)
		// Sessions live in the shared cache, which the CLI reaches.
		redisURL := storagetest.RedisURL(t)
		prefix := "lectern-test:cli-factors:" + rand.Text() + ":"
		c.env["REDIS_URL"], c.env["LECTERN_REDIS_PREFIX"] = redisURL, prefix
		rc, err := cache.NewRedis(ctx, redisURL, &cache.RedisOptions{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		sessions := session.NewStore(rc, nil)

		var academy, beta siteJSON
		c.json(&academy, "site", "create", "--slug", "academy", "--name", "Academy", "--origin", "https://academy.example.test", "--json")
		c.json(&beta, "site", "create", "--slug", "beta", "--name", "Beta", "--origin", "https://beta.example.test", "--json")
		c.ok("user", "create", "--email", "ada@example.test", "--name", "Ada", "--password", "correct horse battery")
		c.ok("user", "create", "--email", "bob@example.test", "--name", "Bob", "--password", "correct horse battery")
		c.ok("role", "grant", "--site", "academy", "--user", "ada@example.test", "--role", "student")

		url := c.env["DATABASE_URL"]
		if url == "" {
			url = "sqlite:" + filepath.Join(c.env["LECTERN_DATA_DIR"], "lectern.db")
		}
		s, err := sqlstore.Open(ctx, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		ada, err := s.UserByEmail(ctx, "ada@example.test")
		if err != nil {
			t.Fatal(err)
		}
		bob, err := s.UserByEmail(ctx, "bob@example.test")
		if err != nil {
			t.Fatal(err)
		}
		siteA, _ := s.SiteByID(ctx, academy.ID)
		siteB, _ := s.SiteByID(ctx, beta.ID)
		now := time.Now().UTC().Truncate(time.Second)
		for i, p := range []storage.Passkey{
			{SiteID: academy.ID, UserID: ada.ID, Name: "Laptop"},
			{SiteID: academy.ID, UserID: ada.ID, Name: "Thief's key"},
			{SiteID: beta.ID, UserID: ada.ID, Name: "Phone"},
			{SiteID: academy.ID, UserID: bob.ID, Name: "Bob's key"},
		} {
			p.CredentialID, p.Data, p.CreatedAt = []byte{byte(i + 1)}, "{}", now
			if err := s.CreatePasskey(ctx, &p); err != nil {
				t.Fatal(err)
			}
		}
		for _, u := range []*storage.User{ada, bob} {
			if err := s.EnableTOTP(ctx, &storage.TOTP{UserID: u.ID, Secret: "JBSWY3DPEHPK3PXP", CreatedAt: now}, [][]byte{[]byte(u.ID + "-code")}); err != nil {
				t.Fatal(err)
			}
		}
		signIn := func(site *storage.Site, userID string) *http.Request {
			t.Helper()
			w := httptest.NewRecorder()
			if _, err := sessions.Create(w, httptest.NewRequest("GET", site.Origin+"/login", nil), site.Tenant(), userID); err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest("GET", site.Origin+"/account", nil)
			for _, ck := range w.Result().Cookies() {
				r.AddCookie(ck)
			}
			return r
		}
		signedIn := func(r *http.Request, site *storage.Site) bool {
			t.Helper()
			got, err := sessions.Get(r, site.Tenant())
			if err != nil {
				t.Fatal(err)
			}
			return got != nil
		}
		bobs := signIn(siteA, bob.ID)
		defer func() { _ = sessions.EndAll(ctx, bob.ID) }()

		// The listing: the app and the passkeys at both sites.
		var listed factorsJSON
		c.json(&listed, "user", "factors", "--email", "Ada@Example.test", "--json")
		if listed.UserID != ada.ID || !listed.App.Enabled || listed.App.CreatedAt == nil || listed.App.RecoveryCodesLeft != 1 || len(listed.Passkeys) != 3 {
			t.Fatalf("user factors: %+v", listed)
		}
		atSite := map[string][]string{}
		for _, p := range listed.Passkeys {
			atSite[p.Site] = append(atSite[p.Site], p.Name)
			if p.CreatedAt.IsZero() || p.LastUsedAt != nil {
				t.Errorf("passkey %+v: want when it was added, never used", p)
			}
		}
		if strings.Join(atSite["academy"], ",") != "Laptop,Thief's key" || strings.Join(atSite["beta"], ",") != "Phone" {
			t.Errorf("user factors lists %v; want Laptop and Thief's key at academy, Phone at beta", atSite)
		}
		if out := c.ok("user", "factors", "--email", "ada@example.test"); !strings.Contains(out, "authenticator app: on since") ||
			!strings.Contains(out, "Thief's key") || !strings.Contains(out, "beta") {
			t.Errorf("user factors:\n%s", out)
		}

		// The passkeys of one site go; the other site's, the app and Bob's
		// stay. Ada's sessions end, at both sites; Bob's does not.
		atA, atB := signIn(siteA, ada.ID), signIn(siteB, ada.ID)
		// And a grant of Ada's at beta (an app she connected there, or
		// one a thief connected with the removed passkey), and Bob's.
		grant := func(site *storage.Site, userID, id string) {
			t.Helper()
			g := &storage.Grant{ID: id, SiteID: site.ID, ClientID: "app", UserID: userID, Scopes: []string{"openid"}, Resource: site.Origin,
				AuthTime: now, CreatedAt: now, ExpiresAt: now.Add(24 * time.Hour), LastUsedAt: now}
			if err := s.CreateGrant(ctx, g, &storage.RefreshToken{TokenHash: []byte(id + "-refresh-token-hash-32-bytes-long"), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
		}
		grant(siteB, ada.ID, "grt_ada_beta")
		grant(siteA, bob.ID, "grt_bob_academy")
		var removed removedJSON
		c.json(&removed, "user", "remove-factors", "--email", "ada@example.test", "--passkeys", "--site", "academy", "--json")
		if removed.AppRemoved || len(removed.PasskeysRemoved) != 2 || !removed.SessionsEnded || removed.GrantsRevoked != 1 || removed.Notices != 1 {
			t.Fatalf("remove-factors --passkeys --site academy: %+v", removed)
		}
		if g, err := s.GrantByID(ctx, beta.ID, "grt_ada_beta"); err != nil || g.RevokedAt == nil {
			t.Errorf("Ada's grant at beta after the removal: %+v, %v; want revoked", g, err)
		}
		if g, err := s.GrantByID(ctx, academy.ID, "grt_bob_academy"); err != nil || g.RevokedAt != nil {
			t.Errorf("Bob's grant after Ada's removal: %+v, %v; want live", g, err)
		}
		if keys, _ := s.Passkeys(ctx, academy.ID, ada.ID); len(keys) != 0 {
			t.Errorf("Ada's passkeys at academy after the removal: %+v", keys)
		}
		if keys, _ := s.Passkeys(ctx, beta.ID, ada.ID); len(keys) != 1 || keys[0].Name != "Phone" {
			t.Errorf("Ada's passkeys at beta after academy's were removed: %+v; want Phone kept", keys)
		}
		if _, err := s.TOTPOf(ctx, ada.ID); err != nil {
			t.Errorf("Ada's app after removing passkeys: %v; want it kept", err)
		}
		if signedIn(atA, siteA) || signedIn(atB, siteB) {
			t.Error("Ada's sessions survived the removal")
		}
		if !signedIn(bobs, siteA) {
			t.Error("Bob's session ended with Ada's")
		}

		// Then the app: it and its recovery codes go, the beta passkey stays.
		atB = signIn(siteB, ada.ID)
		c.json(&removed, "user", "remove-factors", "--email", "ada@example.test", "--app", "--json")
		if !removed.AppRemoved || len(removed.PasskeysRemoved) != 0 || !removed.SessionsEnded || removed.Notices != 1 {
			t.Fatalf("remove-factors --app: %+v", removed)
		}
		if _, err := s.TOTPOf(ctx, ada.ID); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Ada's app after its removal: %v; want ErrNotFound", err)
		}
		if n, _ := s.RecoveryCodesLeft(ctx, ada.ID); n != 0 {
			t.Errorf("Ada has %d recovery codes after the app's removal; want 0", n)
		}
		if keys, _ := s.Passkeys(ctx, beta.ID, ada.ID); len(keys) != 1 {
			t.Errorf("Ada's passkeys at beta after the app's removal: %+v; want Phone kept", keys)
		}
		if signedIn(atB, siteB) {
			t.Error("Ada's session survived the app's removal")
		}
		if _, err := s.TOTPOf(ctx, bob.ID); err != nil {
			t.Errorf("Bob's app: %v; want it kept", err)
		}
		if keys, _ := s.Passkeys(ctx, academy.ID, bob.ID); len(keys) != 1 {
			t.Errorf("Bob's passkeys: %+v; want his kept", keys)
		}
		if out := c.ok("user", "remove-factors", "--email", "ada@example.test", "--app"); !strings.Contains(out, "nothing removed") {
			t.Errorf("removing an app that is gone: %q; want nothing removed", out)
		}

		// The audit: academy has the two passkeys and the app (Ada holds a
		// role there); beta, where no passkey was removed and Ada has no
		// role, has nothing.
		events, err := s.ListAudit(ctx, academy.ID, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range events {
			if !strings.HasPrefix(e.Action, "account.") {
				continue
			}
			if e.Actor != cliActor || e.Target != ada.ID {
				t.Errorf("%s by %q on %q; want by %q on %q", e.Action, e.Actor, e.Target, cliActor, ada.ID)
			}
			name, _ := e.Details["name"].(string)
			got = append(got, e.Action+":"+name)
		}
		if want := []string{"account.passkey_removed:Laptop", "account.passkey_removed:Thief's key", "account.totp_disabled:"}; !sameSet(got, want) {
			t.Errorf("academy's audit events %v; want %v", got, want)
		}
		if events, _ := s.ListAudit(ctx, beta.ID, 0, 100); len(events) != 1 || events[0].Action != "site.created" {
			t.Errorf("beta's audit events %+v; want only its creation", events)
		}

		// The notices, one per removal, from academy.
		msgs, err := s.ClaimMail(ctx, "test", time.Now(), time.Now().Add(time.Minute), 100)
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		for _, m := range msgs {
			if m.ToAddr != ada.Email || m.SiteID != academy.ID {
				t.Errorf("notice to %s from site %d; want to %s from academy", m.ToAddr, m.SiteID, ada.Email)
			}
			texts = append(texts, m.TextBody)
		}
		all := strings.Join(texts, "\n---\n")
		if len(msgs) != 2 || !strings.Contains(all, "Support removed the passkeys of your account at Academy") ||
			!strings.Contains(all, "Laptop, Thief's key") || !strings.Contains(all, "Support turned off the authenticator app") {
			t.Errorf("%d notices; want the passkeys' and the app's:\n%s", len(msgs), all)
		}

		// Mistakes are refused, naming what is wrong.
		c.fails(1, "no user has the e-mail address nobody@example.test", "user", "remove-factors", "--email", "nobody@example.test", "--app")
		c.fails(1, "no user has the e-mail address nobody@example.test", "user", "factors", "--email", "nobody@example.test")
		c.fails(2, "give --app, --passkeys or both", "user", "remove-factors", "--email", "ada@example.test")
		c.fails(2, "give --passkeys with it", "user", "remove-factors", "--email", "ada@example.test", "--app", "--site", "academy")
		c.fails(1, "no site", "user", "remove-factors", "--email", "ada@example.test", "--passkeys", "--site", "nope")
		if keys, _ := s.Passkeys(ctx, beta.ID, ada.ID); len(keys) != 1 {
			t.Errorf("a refused command removed a passkey: %+v", keys)
		}
	})
}

// sameSet reports whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		if seen[s] == 0 {
			return false
		}
		seen[s]--
	}
	return true
}
