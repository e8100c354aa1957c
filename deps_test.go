// Package lectern_test holds repository-wide checks: the dependency rules of
// DESIGN §2 and the doc.go-per-package habit of STYLE.md.
package lectern_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/lectern/lectern"

type goPackage struct {
	ImportPath string
	Dir        string
	Name       string
	Imports    []string // direct imports of non-test files
	Deps       []string // transitive
	GoFiles    []string
}

func listPackages(t *testing.T) []goPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps=false", "-json", "./...")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pkgs []goPackage
	dec := json.NewDecoder(out)
	for {
		var p goPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	return pkgs
}

func rel(p string) string { return strings.TrimPrefix(strings.TrimPrefix(p, module), "/") }

func ours(p string) bool { return p == module || strings.HasPrefix(p, module+"/") }

func isStd(p string) bool { return !strings.Contains(strings.Split(p, "/")[0], ".") }

func TestDependencyRules(t *testing.T) {
	pkgs := listPackages(t)
	if len(pkgs) < 8 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	for _, v := range dependencyViolations(pkgs) {
		t.Error(v)
	}
}

// Where a third-party library may be imported directly.
var onlyIn = map[string][]string{
	"gorm.io/":                          {"storage/sqlstore"},
	"github.com/pressly/goose":          {"storage/sqlstore"},
	"github.com/redis/go-redis":         {"storage/cache"},
	"github.com/go-redis/redis_rate":    {"storage/cache"},
	"github.com/labstack/echo":          {"internal/server", "adminapi"},
	"github.com/glebarez/":              {"storage/sqlstore"},
	"github.com/jackc/pgx":              {"storage/sqlstore"},
	"github.com/zitadel/oidc/v3/pkg/op": {"authserver"},
	"github.com/minio/minio-go":         {"adminapi/s3files"},
	"github.com/wneessen/go-mail":       {"mail"},
	"github.com/go-webauthn/webauthn":   {"mfa"},
	"github.com/pquerna/otp":            {"mfa"},
	// The tracing SDK and exporters are set up in one place; everything
	// else instruments through the API.
	"go.opentelemetry.io/otel/sdk":       {"internal/telemetry"},
	"go.opentelemetry.io/otel/exporters": {"internal/telemetry"},
}

// handlers are the packages that answer requests; each also owns its
// sub-packages. A handler may import its own sub-packages, but of another
// handler only the doors.
var handlers = []string{"authserver", "memberapi", "mcp", "discovery", "adminapi", "web", "accounts"}

// doors are the packages of a handler that the others may import: bearer
// verifies access tokens for every resource server, scope is the scope
// vocabulary, clientmeta the client-metadata (redirect URI) rules that the
// admin area and the admin API apply as registration does, throttle the
// sign-in throttle that the account pages' password checks go through as
// the sign-in form's do.
var doors = []string{"authserver/bearer", "authserver/scope", "authserver/clientmeta", "authserver/throttle"}

// leaves import nothing of ours but what is listed (nil: nothing at all;
// tenant and vocab are standard library only, checked below).
var leaves = map[string][]string{
	"tenant": nil,
	"vocab":  nil,
	// The one look: the request's site (its name and default language)
	// and the message catalogs.
	"ui":      {"tenant", "i18n"},
	"session": {"tenant", "storage"},
	// The mail templates, transports and outbox sender: the outbox
	// records, the message catalogs and nothing of the handlers.
	"mail": {"tenant", "storage", "i18n"},
	// The message catalogs and the choice of language: third-party
	// libraries (go-i18n, x/text) and nothing of ours.
	"i18n": nil,
	// The second factors (TOTP, recovery codes, passkeys) that the
	// sign-in pages check and the account pages enrol.
	"mfa": {"tenant", "storage"},
	// The limits every handler reads with the request's site.
	"limits": {"tenant"},
	// The client-metadata rules every door applies: the standard library
	// and the scope vocabulary.
	"authserver/clientmeta": {"authserver/scope"},
}

// stdlibOnly may not import anything outside the standard library.
var stdlibOnly = []string{"tenant", "vocab"}

// notImported lists, per package tree, what it must never import
// directly, even where another rule would allow it.
func notImported() map[string][]string {
	return map[string][]string{"authserver": {"discovery", "web", "internal/platform"}}
}

// dependencyViolations checks the direct imports of non-test files against
// the rules of docs/architecture.md and returns one message per breach.
func dependencyViolations(pkgs []goPackage) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	forbidden := notImported()
	for _, p := range pkgs {
		r := rel(p.ImportPath)
		for _, imp := range p.Imports {
			for prefix, allowed := range onlyIn {
				if strings.HasPrefix(imp, prefix) && !slices.Contains(allowed, r) {
					bad("%s imports %s; only %v may", r, imp, allowed)
				}
			}
			if slices.Contains(stdlibOnly, r) && !isStd(imp) {
				bad("%s must use the standard library only; it imports %s", r, imp)
			}
			if !ours(imp) {
				continue
			}
			ir := rel(imp)
			if allowed, leaf := leaves[r]; leaf && !slices.Contains(allowed, ir) {
				bad("%s is a leaf and may import only %v of ours; it imports %s", r, allowed, ir)
			}
			if ir == "internal/server" && r != "cmd/lectern" {
				bad("%s imports internal/server, the wiring; only cmd/lectern may", r)
			}
			if strings.HasPrefix(r, "storage") && (slices.Contains(handlers, topLevel(ir)) || topLevel(ir) == "cmd" || ir == "internal/server") {
				bad("%s (storage) imports the handler package %s", r, ir)
			}
			if h := topLevel(r); slices.Contains(handlers, h) {
				if other := topLevel(ir); other != h && slices.Contains(handlers, other) && !slices.Contains(doors, ir) {
					bad("%s imports %s; a handler may import of another handler only %v", r, ir, doors)
				}
				for _, f := range forbidden[h] {
					if ir == f || strings.HasPrefix(ir, f+"/") {
						bad("%s imports %s, which %s must never import", r, ir, h)
					}
				}
			}
		}
	}
	return out
}

// The rules catch the mistakes they exist for: each of these imports must
// be reported, and the allowed ones must not.
func TestDependencyRulesCatchMistakes(t *testing.T) {
	for _, c := range []struct {
		pkg, imp string
		want     bool
	}{
		{"web", "authserver", true},
		{"web", "discovery", true},
		{"authserver", "discovery", true},
		{"authserver", "web", true},
		{"authserver/cimd", "web/anything", true},
		{"mcp", "discovery", true},
		{"mcp", "authserver/keys", true},
		{"adminapi/s3files", "memberapi", true},
		{"discovery", "mcp", true},
		{"ui", "storage", true},
		{"ui", "i18n", false},
		{"i18n", "tenant", true},
		{"mail", "i18n", false},
		{"session", "authserver", true},
		{"vocab", "tenant", true},
		{"tenant", "storage", true},
		{"storage/sqlstore", "authserver/keys", true},
		{"mcp", "authserver/bearer", false},
		{"memberapi", "authserver/scope", false},
		{"web", "authserver/clientmeta", false},
		{"adminapi/s3files", "adminapi", false},
		{"authserver", "authserver/keys", false},
		{"web", "session", false},
		{"web", "ui", false},
		{"authserver", "session", false},
		{"session", "storage", false},
		{"mcp", "vocab", false},
		{"web", "internal/platform", false},
		{"mcp", "internal/server", true},
		{"cmd/lectern", "internal/server", false},
		{"storage/cache", "internal/server", true},
		{"authserver", "internal/platform", true},
		{"authserver/clientmeta", "tenant", true},
		{"adminapi", "authserver/clientmeta", false},
		{"accounts", "authserver", true},
		{"accounts", "web", true},
		{"accounts", "internal/platform", false},
		{"accounts", "authserver/throttle", false},
		{"web", "authserver/throttle", false},
		{"accounts", "authserver/password", true},
		{"authserver", "accounts", true},
		{"mail", "session", true},
		{"mail", "storage", false},
		{"limits", "storage", true},
		{"memberapi", "limits", false},
	} {
		got := dependencyViolations([]goPackage{{ImportPath: module + "/" + c.pkg, Imports: []string{module + "/" + c.imp}}})
		if (len(got) > 0) != c.want {
			t.Errorf("%s importing %s: violations %q; want reported: %v", c.pkg, c.imp, got, c.want)
		}
	}
	if got := dependencyViolations([]goPackage{{ImportPath: module + "/vocab", Imports: []string{"github.com/google/go-cmp/cmp"}}}); len(got) == 0 {
		t.Error("vocab importing a third-party module is not reported")
	}
	if got := dependencyViolations([]goPackage{{ImportPath: module + "/web", Imports: []string{"github.com/labstack/echo/v4"}}}); len(got) == 0 {
		t.Error("web importing echo is not reported")
	}
	if got := dependencyViolations([]goPackage{{ImportPath: module + "/accounts", Imports: []string{"github.com/wneessen/go-mail"}}}); len(got) == 0 {
		t.Error("accounts importing go-mail is not reported")
	}
}

func topLevel(r string) string { return strings.Split(r, "/")[0] }

// TestEveryPackageHasDocGo: each package says in doc.go what it owns and
// what it must not import.
func TestEveryPackageHasDocGo(t *testing.T) {
	for _, p := range listPackages(t) {
		if p.Name == "lectern_test" || len(p.GoFiles) == 0 {
			continue
		}
		if _, err := os.Stat(filepath.Join(p.Dir, "doc.go")); err != nil {
			t.Errorf("%s has no doc.go", rel(p.ImportPath))
		}
	}
}
