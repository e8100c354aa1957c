package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"time"
)

// nginxBin is Debian's nginx.
var nginxBin = "/usr/sbin/nginx"

// nginx is one nginx master with its own prefix directory.
type nginx struct {
	prefix string
	port   int
	p      *proc
}

var (
	listenRe   = regexp.MustCompile(`(?m)^(\s*listen\s+)8080;`)
	upstreamRe = regexp.MustCompile(`(?m)^(\s*server\s+127\.0\.0\.1:)808([1-9])(\s)`)
)

// nginxConf rewrites the committed deploy/nginx/lectern.conf to the
// driver's ports and wraps it in a main configuration whose every path is
// under prefix (no root-only path).
func nginxConf(site []byte, prefix string, port int, replicas []int) (string, error) {
	s := string(site)
	if !listenRe.MatchString(s) || len(upstreamRe.FindAllString(s, -1)) != len(replicas) {
		return "", fmt.Errorf("deploy/nginx/lectern.conf: expected `listen 8080;` and %d `server 127.0.0.1:808N` lines", len(replicas))
	}
	s = listenRe.ReplaceAllString(s, "${1}127.0.0.1:"+strconv.Itoa(port)+";")
	s = upstreamRe.ReplaceAllStringFunc(s, func(m string) string {
		sub := upstreamRe.FindStringSubmatch(m)
		i, _ := strconv.Atoi(sub[2])
		return sub[1] + strconv.Itoa(replicas[i-1]) + sub[3]
	})
	user := ""
	if os.Geteuid() == 0 {
		// Workers of a root master run as nobody; the temp paths below
		// are made writable for them.
		user = "user nobody nogroup;\n"
	}
	return fmt.Sprintf(`%sworker_processes 1;
daemon off;
pid %[2]s/nginx.pid;
error_log %[2]s/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path %[2]s/tmp/body;
    proxy_temp_path %[2]s/tmp/proxy;
    fastcgi_temp_path %[2]s/tmp/fastcgi;
    uwsgi_temp_path %[2]s/tmp/uwsgi;
    scgi_temp_path %[2]s/tmp/scgi;
%[3]s
}
`, user, prefix, s), nil
}

// startNginx writes the configuration and starts nginx in the foreground
// (daemon off), so the driver holds the master's PID.
func startNginx(confPath, prefix string, port int, replicas []int) (*nginx, error) {
	site, err := os.ReadFile(confPath)
	if err != nil {
		return nil, err
	}
	for _, d := range []string{"tmp/body", "tmp/proxy", "tmp/fastcgi", "tmp/uwsgi", "tmp/scgi", "logs"} {
		if err := os.MkdirAll(filepath.Join(prefix, d), 0o777); err != nil {
			return nil, err
		}
		_ = os.Chmod(filepath.Join(prefix, d), 0o777)
	}
	_ = os.Chmod(filepath.Join(prefix, "tmp"), 0o777)
	conf, err := nginxConf(site, prefix, port, replicas)
	if err != nil {
		return nil, err
	}
	cp := filepath.Join(prefix, "nginx.conf")
	if err := os.WriteFile(cp, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	if err := portFree(port); err != nil {
		return nil, err
	}
	p, err := startProc("nginx", filepath.Join(prefix, "nginx.out"), nil, nil, nginxBin, "-p", prefix, "-c", cp)
	if err != nil {
		return nil, err
	}
	n := &nginx{prefix: prefix, port: port, p: p}
	deadline := time.Now().Add(10 * time.Second)
	for portFree(port) == nil {
		if !p.running() || time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(prefix, "error.log"))
			_ = n.stop()
			return nil, fmt.Errorf("nginx did not listen on %d: %s %s", port, p.logTail(), b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return n, nil
}

// stop is a graceful shutdown (SIGQUIT), by PID.
func (n *nginx) stop() error { return n.p.stop(syscall.SIGQUIT, 15*time.Second) }
