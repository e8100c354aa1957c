package main

import (
	"io"
	"os"
	"sort"
	"strings"
	"testing"
)

// deploy/README.md's settings table lists every variable serve reads (the
// limits as LECTERN_LIMIT_*), and the Kubernetes manifests say where the
// SMTP server and the sender address of the account mail are set.
func TestDeployDocsListServeSettings(t *testing.T) {
	readme, err := os.ReadFile("../../deploy/README.md")
	if err != nil {
		t.Fatal(err)
	}
	env := &cmdEnv{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }, lookupEnv: func(string) (string, bool) { return "", false }}
	fs := newCmdFlags(env, "serve", help{})
	var cfg config
	cfg.serving(fs)
	cfg.logging(fs, true)
	cfg.connection(fs, true)
	var missing []string
	for _, v := range fs.envs {
		if strings.HasPrefix(v, "LECTERN_LIMIT_") && v != "LECTERN_LIMIT_CEILING_FACTOR" {
			v = "LECTERN_LIMIT_*"
		}
		if !strings.Contains(string(readme), "`"+v+"`") {
			missing = append(missing, v)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("deploy/README.md's settings do not list %v", missing)
	}
	for file, want := range map[string][]string{
		"../../deploy/k8s/deployment.yaml":     {"LECTERN_SMTP_URL", "smtp-url"},
		"../../deploy/k8s/secret.example.yaml": {"smtp-url:"},
		"../../deploy/k8s/configmap.yaml":      {"LECTERN_MAIL_FROM:"},
	} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s does not mention %s", file, w)
			}
		}
	}
}
