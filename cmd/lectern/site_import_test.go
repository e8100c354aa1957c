package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSiteImport drives `lectern site import` as an operator would: a file
// with good and bad lines, exit 1 and a per-line report, then the same
// file again with nothing created.
func TestSiteImport(t *testing.T) {
	for _, pg := range []bool{false, true} {
		name := map[bool]string{false: "sqlite", true: "postgres"}[pg]
		t.Run(name, func(t *testing.T) {
			c := newCLI(t, pg)
			file := filepath.Join(t.TempDir(), "sites.jsonl")
			text := `{"slug":"alpha","name":"Alpha","origin":"https://alpha.example.test","settings":{"id_tokens":true}}
{"slug":"beta","name":"Beta","origin":"https://beta.example.test/path"}
not json
{"slug":"gamma","name":"Gamma","origin":"https://gamma.example.test","variant":"B"}
`
			if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			code, out, errs := c.run("site", "import", "--file", file, "--json")
			if code != 1 {
				t.Fatalf("exit %d with refused lines, want 1\n%s\n%s", code, out, errs)
			}
			var rep struct {
				Created, Refused int
				Lines            []struct {
					Line         int
					Slug, Status string
					Reason       string
				}
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("report is not JSON: %v\n%s", err, out)
			}
			if rep.Created != 2 || rep.Refused != 2 || len(rep.Lines) != 4 {
				t.Fatalf("report %+v, want 2 created and 2 refused", rep)
			}
			if l := rep.Lines[1]; l.Line != 2 || l.Status != "refused" || !strings.Contains(l.Reason, "origin") {
				t.Errorf("line 2: %+v, want refused for its origin", l)
			}
			if l := rep.Lines[2]; l.Line != 3 || !strings.Contains(l.Reason, "malformed JSON") {
				t.Errorf("line 3: %+v, want refused as malformed JSON", l)
			}

			good := filepath.Join(t.TempDir(), "good.jsonl")
			lines := strings.Split(text, "\n")
			if err := os.WriteFile(good, []byte(lines[0]+"\n"+lines[3]+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			out = c.ok("site", "import", "--file", good)
			if !strings.Contains(out, "0 created, 2 unchanged") {
				t.Errorf("second run: %q, want 0 created, 2 unchanged", out)
			}
			var sites []map[string]any
			c.json(&sites, "site", "list", "--json")
			if len(sites) != 2 {
				t.Errorf("site list has %d sites, want 2", len(sites))
			}
		})
	}
}
