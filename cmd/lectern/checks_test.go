package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lectern/lectern/storage/sqlstore"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
)

const (
	testKEK  = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	otherKEK = "HxwdHhscGRoXGBUWExQREg8QDQ4LDAkKBwgFBgMEAQI="
)

func writeFile(t *testing.T, text string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// importReportOf runs site import and decodes its --json report.
func importReportOf(t *testing.T, c *cli, file string) (int, importReport, string) {
	t.Helper()
	code, out, errs := c.run("site", "import", "--file", file, "--json")
	var rep importReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s\n%s", err, out, errs)
	}
	return code, rep, errs
}

// --site names a site by its exact slug or its ID in canonical decimal;
// "16abc", "0x10", " 16" and "01" name no site, whatever sites exist. A
// slug made of digits wins over the ID of the same digits.
func TestSiteRefIsExact(t *testing.T) {
	c := newCLI(t, false)
	var first, digits siteJSON
	c.json(&first, "site", "create", "--slug", "first", "--name", "F", "--origin", "https://first.example.test", "--json")
	for _, ref := range []string{first.Slug, "1"} {
		var s siteJSON
		c.json(&s, "site", "update", "--site", ref, "--description", "d", "--json")
		if s.ID != first.ID {
			t.Errorf("--site %q changed site %d; want %d", ref, s.ID, first.ID)
		}
	}
	for _, ref := range []string{"1abc", "0x1", " 1", "01", "+1", "-1", "9999"} {
		c.fails(1, "no site", "site", "update", "--site", ref, "--description", "x")
	}
	c.json(&digits, "site", "create", "--slug", "1", "--name", "D", "--origin", "https://digits.example.test", "--json")
	var s siteJSON
	c.json(&s, "site", "update", "--site", "1", "--description", "d", "--json")
	if s.ID != digits.ID {
		t.Errorf("--site 1 with a site whose slug is 1: changed site %d; want the slug's site %d", s.ID, digits.ID)
	}
	// cimd allow reads --site by the same rule.
	var allowed map[string]any
	c.json(&allowed, "cimd", "allow", "--host", "tools.example.test", "--site", "2", "--json")
	if allowed["site_id"] != float64(2) {
		t.Errorf("cimd allow --site 2: %v", allowed)
	}
	c.fails(1, "no site", "cimd", "allow", "--host", "tools.example.test", "--site", "2x")
}

// One bad line of an import is refused on its own, on both backends: a
// NUL in a name (PostgreSQL refuses it in the batched INSERT), bytes that
// are not UTF-8, a duplicate alias, an over-long line (numbered as in the
// file); the others are created.
func TestSiteImportRefusesLinesOnTheirOwn(t *testing.T) {
	long := `{"slug":"long","name":"` + strings.Repeat("a", 70000) + `","origin":"https://long.example.test"}`
	text := "\ufeff" + `{"slug":"p4","name":"N\u0000x","origin":"https://p4.example.test"}
{"slug":"p5","name":"ok","origin":"https://p5.example.test"}
{"slug":"p6","name":"a` + "\xff" + `b","origin":"https://p6.example.test"}

` + long + `
{"slug":"p7","name":"ok","origin":"https://p7.example.test","settings":{"aliases":["www.p7.example.test","www.p7.example.test"]}}
{"slug":"p8","name":"ok","origin":"https://p8.example.test","settings":{"description":"a\u0000"}}
{"slug":"p9","name":"ok","origin":"https://p9.example.test","settings":{"locale":"zz-ZZ<>"}}
{"slug":"p10","name":"ok","origin":"https://p10.example.test."}
`
	for _, pg := range []bool{false, true} {
		t.Run(map[bool]string{false: "sqlite", true: "postgres"}[pg], func(t *testing.T) {
			c := newCLI(t, pg)
			code, rep, errs := importReportOf(t, c, writeFile(t, text))
			if code != 1 || rep.Created != 1 || rep.Refused != 7 {
				t.Fatalf("exit %d, report %+v; want p5 created and 7 lines refused\n%s", code, rep, errs)
			}
			want := map[int]string{1: "name", 3: "UTF-8", 5: "longer than", 6: "given twice", 7: "description", 8: "locale", 9: "dot"}
			for _, l := range rep.Lines {
				if l.Line == 2 {
					if l.Status != "created" {
						t.Errorf("line 2: %+v; want created", l)
					}
					continue
				}
				if w, ok := want[l.Line]; ok && (l.Status != "refused" || !strings.Contains(l.Reason, w)) {
					t.Errorf("line %d: %+v; want refused mentioning %q", l.Line, l, w)
				}
			}
			if strings.Contains(errs, "sql failed") {
				t.Errorf("an SQL statement failed:\n%s", errs)
			}
		})
	}
}

// user create takes only an e-mail address (the check of invitations and
// sign-up), and a picture only as an https URL (http for loopback).
func TestUserCreateChecksAddressAndPicture(t *testing.T) {
	c := newCLI(t, false)
	for _, e := range []string{"@", "a@", "@b", "x@y@z", "a b@c d", "a@b,c@d", "<script>@x", "nl\n@x.test"} {
		c.fails(1, "not an e-mail address", "user", "create", "--email", e, "--name", "N", "--password", "longpassword1")
	}
	for _, p := range []string{"javascript:alert(1)", "not a url", "http://example.com/a.png", "data:image/png;base64,AAAA"} {
		c.fails(1, "picture", "user", "create", "--email", "p@x.test", "--name", "N", "--password", "longpassword1", "--picture", p)
	}
	// No password at all is asked for as such, not as a short one (audit N).
	c.fails(1, "a password is required: give --password-stdin", "user", "create", "--email", "p@x.test", "--name", "N")
	c.ok("user", "create", "--email", "p@x.test", "--name", "N", "--password", "longpassword1", "--picture", "https://cdn.example/p.png")
	c.ok("user", "create", "--email", "q@x.test", "--name", "N", "--password", "longpassword1", "--picture", "http://localhost:8080/p.png")
	c.fails(1, "exists already", "user", "create", "--email", "P@x.test", "--name", "N", "--password", "longpassword1")
	c.fails(2, "alternatives", "user", "create", "--email", "r@x.test", "--name", "N", "--password", "longpassword1", "--password-stdin")
	c.fails(2, "missing --email", "user", "create", "--name", "N", "--password", "longpassword1")
}

// A site's name, description and locale are text within bounds; origins
// and aliases with a trailing dot are refused (the resolver keeps the dot);
// a taken slug or host is named, without a failed SQL statement logged.
func TestSiteCreateChecks(t *testing.T) {
	c := newCLI(t, false)
	c.ok("site", "create", "--slug", "o2", "--name", "O 2", "--origin", "https://a.example.test", "--alias", "www.a.example.test")
	for _, tc := range []struct{ want, flag, value string }{
		{"name", "--name", strings.Repeat("a", 201)},
		{"name", "--name", "a\xffb"},
		{"name", "--name", "a\x1b[31mred\nb"},
		{"description", "--description", "\xff"},
		{"locale", "--locale", "zz-ZZ<>"},
		{"dot", "--origin", "https://a.example.test."},
		{"dot", "--alias", "b.example.test."},
		{"given twice", "--alias", "x.example.test"},
	} {
		args := []string{"site", "create", "--slug", "n1", "--name", "N", "--origin", "https://n1.example.test", tc.flag, tc.value}
		if tc.want == "given twice" {
			args = append(args, "--alias", "X.example.test")
		}
		c.fails(1, tc.want, args...)
	}
	c.ok("site", "create", "--slug", "n1", "--name", "N", "--origin", "https://n1.example.test", "--locale", "pt-BR", "--description", "two\nlines")
	for _, tc := range []struct {
		want string
		args []string
	}{
		{`slug "o2" is taken by site 1`, []string{"--slug", "o2", "--origin", "https://z.example.test"}},
		{`origin's host "a.example.test" is served by site 1`, []string{"--slug", "z", "--origin", "https://A.Example.test"}},
		{`alias "www.a.example.test" is served by site 1`, []string{"--slug", "z", "--origin", "https://z.example.test", "--alias", "www.a.example.test"}},
	} {
		code, _, errs := c.run(append([]string{"site", "create", "--name", "Z"}, tc.args...)...)
		if code != 1 || !strings.Contains(errs, tc.want) || strings.Contains(errs, "sql failed") {
			t.Errorf("site create %v: exit %d, %q; want exit 1 naming %q and no failed SQL", tc.args, code, errs, tc.want)
		}
	}
	c.fails(1, `slug "o2" is taken by site 1`, "site", "update", "--site", "n1", "--slug", "o2")
	// Adding an alias the site has already changes nothing.
	c.ok("site", "update", "--site", "o2", "--alias", "www.a.example.test")
	c.fails(2, "missing --slug, --name, --origin", "site", "create")
	c.fails(2, "missing --file", "site", "import")
}

// keys rotate and site create refuse to seal keys under a key-encryption
// key that did not seal the existing rings (a mistyped LECTERN_KEK), and
// nothing is written.
func TestWrongKEKIsRefused(t *testing.T) {
	c := newCLI(t, false)
	c.env["LECTERN_KEK"] = testKEK
	c.ok("site", "create", "--slug", "k1", "--name", "K", "--origin", "https://k1.example.test")
	c.env["LECTERN_KEK"] = otherKEK
	c.fails(1, "key-encryption", "keys", "rotate", "--site", "k1", "--activate-in", "0")
	c.fails(1, "key-encryption", "site", "create", "--slug", "k2", "--name", "K", "--origin", "https://k2.example.test")
	c.env["LECTERN_KEK"] = testKEK
	var st []struct {
		Pending string `json:"pending_kid"`
	}
	c.json(&st, "keys", "status", "--json")
	var sites []siteJSON
	c.json(&sites, "site", "list", "--json")
	if len(st) != 1 || st[0].Pending != "" || len(sites) != 1 {
		t.Fatalf("after refused commands: keys %+v, %d sites; want one site without a pending key", st, len(sites))
	}
	c.ok("keys", "rotate", "--site", "k1")
	c.env["LECTERN_KEK_FILE"] = writeFile(t, testKEK)
	c.fails(2, "give the key-encryption key once", "site", "list")
}

// --activate-in is between 0 and a week, and a second rotation while a
// next key is pending is refused.
func TestKeysRotateActivateIn(t *testing.T) {
	c := newCLI(t, false)
	c.ok("site", "create", "--slug", "r1", "--name", "R", "--origin", "https://r1.example.test")
	c.fails(2, "--activate-in", "keys", "rotate", "--site", "r1", "--activate-in", "-1h")
	c.fails(2, "--activate-in", "keys", "rotate", "--site", "r1", "--activate-in", "100000h")
	c.ok("keys", "rotate", "--site", "r1", "--activate-in", "2h")
	c.fails(1, "next key already", "keys", "rotate", "--site", "r1")
}

// A second vendor answering to a name (or client_name) a vendor already
// answers to could never be matched at registration: it is refused.
func TestVendorAddRefusesDuplicates(t *testing.T) {
	c := newCLI(t, false)
	c.ok("vendor", "add", "--name", "Course Pilot", "--client-name", "CoursePilot", "--redirect-uri", "https://coursepilot.example/cb")
	c.fails(1, "already answers", "vendor", "add", "--name", "Course Pilot", "--client-name", "Other", "--redirect-uri", "https://coursepilot.example/cb")
	c.fails(1, "already answers", "vendor", "add", "--name", "Other", "--client-name", "coursepilot", "--redirect-uri", "https://other.example/cb")
	c.fails(1, "already answers", "vendor", "add", "--name", "CoursePilot", "--redirect-uri", "https://other.example/cb")
	c.ok("vendor", "add", "--name", "Other", "--redirect-uri", "https://other.example/cb")
}

// Environment values are refused as the same value given as the flag is,
// naming the variable.
func TestEnvironmentValuesAreChecked(t *testing.T) {
	for _, tc := range []struct {
		env, value string
		code       int
	}{
		{"LECTERN_ACCESS_LOG", "off", 2},
		{"LECTERN_KEY_ROTATION", "off", 2},
		{"LECTERN_PPROF", "on", 2},
		{"LECTERN_SITE_CACHE_TTL", "5", 2},
		{"LECTERN_LIMIT_TOKEN_PER_CLIENT", "abc", 2},
		{"LECTERN_LIMIT_TOKEN_PER_CLIENT", "0", 2},
		{"LECTERN_SESSIONS_PER_ACCOUNT", "0", 2},
		{"LECTERN_PASSWORD_CHECKS", "-2", 2},
		{"LECTERN_PASSWORD_QUEUE", "-3", 2},
	} {
		c := newCLI(t, false)
		c.env[tc.env] = tc.value
		c.fails(tc.code, tc.env, "serve", "--addr", "127.0.0.1:0", "--metrics-addr", "")
	}
	c := newCLI(t, false)
	c.env["LECTERN_REDIS_ALLOW_EVICTION"] = "yes"
	c.fails(2, "LECTERN_REDIS_ALLOW_EVICTION", "site", "list")
}

// The password gate's flags are checked as the limits are: a value below
// 1 (which the gate would have replaced with its default without a word;
// --password-queue 0 does not mean "no queue") or absurdly high is a
// usage error naming the flag, its variable and the range.
func TestPasswordGateFlagsAreChecked(t *testing.T) {
	for _, tc := range []struct{ flag, value, want string }{
		{"--password-checks", "0", "--password-checks (LECTERN_PASSWORD_CHECKS) must be between 1 and 1024"},
		{"--password-checks", "-2", "--password-checks (LECTERN_PASSWORD_CHECKS) must be between 1 and 1024"},
		{"--password-checks", "5000", "--password-checks (LECTERN_PASSWORD_CHECKS) must be between 1 and 1024"},
		{"--password-queue", "0", "--password-queue (LECTERN_PASSWORD_QUEUE) must be between 1 and 1000"},
		{"--password-queue", "-3", "--password-queue (LECTERN_PASSWORD_QUEUE) must be between 1 and 1000"},
		{"--password-queue", "1001", "--password-queue (LECTERN_PASSWORD_QUEUE) must be between 1 and 1000"},
	} {
		t.Run(tc.flag+"="+tc.value, func(t *testing.T) {
			c := newCLI(t, false)
			c.fails(2, tc.want, "serve", "--addr", "127.0.0.1:0", "--metrics-addr", "", tc.flag, tc.value)
		})
	}
}

// serve with the seed off runs on an ephemeral port (tests, sidecars).
func TestServeEphemeralPortWithoutSeed(t *testing.T) {
	c := newCLI(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var out, errb strings.Builder
	code := run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--metrics-addr", "", "--demo-seed=false", "--shutdown-delay", "0s"}, &out, &errb,
		func(k string) (string, bool) { v, ok := c.env[k]; return v, ok })
	if code != 0 || strings.Contains(errb.String(), "fixed port") {
		t.Fatalf("serve on 127.0.0.1:0 without the seed: exit %d\n%s", code, errb.String())
	}
}

// migrate checks the KEK before it touches the schema: a failed run
// leaves the database as it was.
func TestMigrateChecksKEKFirst(t *testing.T) {
	c := &cli{t: t, env: map[string]string{"LECTERN_DATA_DIR": t.TempDir(), "DATABASE_URL": sqltest.PostgresSchemaURL(t)}}
	c.fails(1, "key-encryption key", "migrate")
	c.env["LECTERN_KEK"] = testKEK
	c.fails(1, "schema is at version 0", "site", "list")
	if out := c.ok("migrate"); !strings.Contains(out, "schema at version") {
		t.Fatalf("migrate: %q", out)
	}
}

// A command that does not migrate creates no database at a sqlite: path
// that does not exist.
func TestReadOnlyCommandCreatesNoDatabase(t *testing.T) {
	c := newCLI(t, false)
	dir := filepath.Join(t.TempDir(), "nope")
	c.env["LECTERN_KEK"] = testKEK
	c.fails(1, "no database", "site", "list", "--database-url", "sqlite:"+filepath.Join(dir, "x.db"))
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s exists after site list: %v", dir, err)
	}
}

// The previous release runs on a newer schema during a rolling upgrade
// (docs/decisions.md); it warns, and only migrate refuses.
func TestNewerSchemaRunsMigrateRefuses(t *testing.T) {
	c := newCLI(t, false)
	c.ok("site", "list")
	s, err := sqlstore.Open(context.Background(), "sqlite:"+filepath.Join(c.env["LECTERN_DATA_DIR"], "lectern.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Exec(context.Background(), "INSERT INTO goose_db_version (version_id, is_applied) VALUES (9999, true)"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	c.env["DATABASE_URL"] = "sqlite:" + filepath.Join(c.env["LECTERN_DATA_DIR"], "lectern.db")
	c.env["LECTERN_KEK_FILE"] = filepath.Join(c.env["LECTERN_DATA_DIR"], "kek")
	// The warning goes to the process's stderr (the logger's), not to
	// errs.
	if code, _, errs := c.run("site", "list"); code != 0 {
		t.Fatalf("site list on a newer schema: exit %d\n%s", code, errs)
	}
	c.fails(1, "newer", "migrate")
}

// role grant and revoke say what is wrong: an unknown user, a role that is
// not one, a role the user does not hold.
func TestRoleMessages(t *testing.T) {
	c := newCLI(t, false)
	c.ok("site", "create", "--slug", "i1", "--name", "I", "--origin", "https://i1.example.test")
	c.ok("user", "create", "--email", "w2@x.test", "--name", "W", "--password", "longpassword1")
	c.fails(1, "no user has the e-mail address nobody@x.test", "role", "grant", "--site", "i1", "--user", "nobody@x.test", "--role", "student")
	c.fails(1, `role "superuser" is not one of`, "role", "revoke", "--site", "i1", "--user", "w2@x.test", "--role", "superuser")
	c.fails(1, "does not hold the role lecturer", "role", "revoke", "--site", "i1", "--user", "w2@x.test", "--role", "lecturer")
}

// Help reads as help: --kek-previous has no command for a type, a default
// is said once, and "lectern help site" is the site commands' help.
func TestHelpNits(t *testing.T) {
	c := newCLI(t, false)
	_, _, migrate := c.run("migrate", "--help")
	if strings.Contains(migrate, "--kek-previous lectern") {
		t.Errorf("--kek-previous shows a command as its type:\n%s", migrate)
	}
	_, _, serve := c.run("serve", "--help")
	entry := serve[strings.Index(serve, "--password-checks"):]
	entry = entry[:strings.Index(entry, "\n  --")]
	if n := strings.Count(entry, "default"); n != 1 {
		t.Errorf("--password-checks says default %d times: %q", n, entry)
	}
	code, _, site := c.run("help", "site")
	if code != 0 || !strings.Contains(site, "lectern site create|list|update|import") {
		t.Errorf("lectern help site: exit %d\n%s", code, site)
	}
	code, _, create := c.run("help", "site", "create")
	if code != 0 || !strings.HasPrefix(create, "Usage: lectern site create") {
		t.Errorf("lectern help site create: exit %d\n%s", code, create)
	}
}
