// Package lectern_test holds repository-wide checks: the dependency rules of
// DESIGN §2 and the doc.go-per-package habit of STYLE.md.
package lectern_test

import (
	"encoding/json"
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
	// Where a third-party library may be imported directly.
	only := map[string][]string{
		"gorm.io/":                          {"storage/sqlstore"},
		"github.com/redis/go-redis":         {"storage/cache"},
		"github.com/go-redis/redis_rate":    {"storage/cache"},
		"github.com/labstack/echo":          {"cmd/lectern", "adminapi"},
		"github.com/glebarez/":              {"storage/sqlstore"},
		"github.com/jackc/pgx":              {"storage/sqlstore"},
		"github.com/zitadel/oidc/v3/pkg/op": {"authserver"},
		"github.com/minio/minio-go":         {"adminapi/s3files"},
	}
	resourceServers := []string{"memberapi", "mcp", "adminapi"}
	handlers := []string{"authserver", "memberapi", "mcp", "discovery", "adminapi", "web", "cmd"}
	for _, p := range pkgs {
		r := rel(p.ImportPath)
		for _, imp := range p.Imports {
			for prefix, allowed := range only {
				if strings.HasPrefix(imp, prefix) && !slices.Contains(allowed, r) {
					t.Errorf("%s imports %s; only %v may", r, imp, allowed)
				}
			}
			ir := rel(imp)
			switch {
			case r == "tenant" && !isStd(imp):
				t.Errorf("tenant must use the standard library only; it imports %s", imp)
			case strings.HasPrefix(r, "storage") && ours(imp):
				for _, h := range handlers {
					if ir == h || strings.HasPrefix(ir, h+"/") {
						t.Errorf("%s (storage) imports the handler package %s", r, ir)
					}
				}
			case r == "authserver/clientmeta" && !isStd(imp) && ir != "authserver/scope":
				t.Errorf("authserver/clientmeta is a leaf (the standard library and authserver/scope); it imports %s", ir)
			case slices.Contains(resourceServers, topLevel(r)) && ours(imp) && strings.HasPrefix(ir, "authserver"):
				if ir != "authserver/bearer" && ir != "authserver/scope" && ir != "authserver/clientmeta" {
					t.Errorf("%s imports %s; resource servers may import only authserver/bearer (and authserver/scope, authserver/clientmeta)", r, ir)
				}
			}
		}
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
