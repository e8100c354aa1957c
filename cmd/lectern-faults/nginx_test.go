package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lectern/lectern/storage/storagetest"
)

// The driver runs the committed deploy/nginx/lectern.conf with only its
// ports changed, and real nginx accepts the result.
func TestNginxConfFromDeploy(t *testing.T) {
	site, err := os.ReadFile("../../deploy/nginx/lectern.conf")
	if err != nil {
		t.Fatal(err)
	}
	prefix := t.TempDir()
	conf, err := nginxConf(site, prefix, 33080, []int{33101, 33102, 33103})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"listen 127.0.0.1:33080;", "server 127.0.0.1:33101 ", "server 127.0.0.1:33102 ", "server 127.0.0.1:33103 ",
		"proxy_next_upstream error timeout non_idempotent;", "pid " + prefix + "/nginx.pid;"} {
		if !strings.Contains(conf, want) {
			t.Errorf("configuration lacks %q:\n%s", want, conf)
		}
	}
	for _, gone := range []string{"    listen 8080", "127.0.0.1:8081", "127.0.0.1:8082", "127.0.0.1:8083"} {
		if strings.Contains(conf, gone) {
			t.Errorf("configuration still has %q", gone)
		}
	}
	if _, err := nginxConf([]byte("server { listen 80; }"), prefix, 1, []int{2}); err == nil {
		t.Error("a configuration without the expected lines was accepted")
	}

	if _, err := os.Stat(nginxBin); err != nil {
		if storagetest.Required() {
			t.Fatalf("nginx is required (LECTERN_REQUIRE_SERVICES=1): %v", err)
		}
		t.Skipf("%s not installed; set LECTERN_REQUIRE_SERVICES=1 to fail instead", nginxBin)
	}
	for _, d := range []string{"tmp/body", "tmp/proxy", "tmp/fastcgi", "tmp/uwsgi", "tmp/scgi", "logs"} {
		if err := os.MkdirAll(filepath.Join(prefix, d), 0o777); err != nil {
			t.Fatal(err)
		}
	}
	cp := filepath.Join(prefix, "nginx.conf")
	if err := os.WriteFile(cp, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(nginxBin, "-t", "-p", prefix, "-c", cp).CombinedOutput(); err != nil {
		t.Fatalf("nginx -t: %v\n%s", err, out)
	}
}
