package main

import (
	"bytes"
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// helpFlag matches a flag's line in the help: its name and type (none for
// a boolean).
var helpFlag = regexp.MustCompile(`(?m)^  --([a-z-]+)(?: ([^ ]+))? {2,}`)

// Each command's --help lists its own flags, then only the shared flags it
// uses (grouped, with Connection last), and an example that uses only
// flags the command has; every flag listed is one the command accepts.
// serve's flags appear under serve alone.
func TestHelpFitsEachCommand(t *testing.T) {
	serveOnly := []string{"addr", "trusted-proxies", "files-url", "metrics-addr", "pprof", "site-cache-ttl", "site-cache-entries", "demo-seed", "key-pre-publish", "key-rotation",
		"access-log", "db-max-conns", "redis-autopipeline"}
	logging := []string{"log-level", "log-format"}
	connection := []string{"database-url", "data-dir", "kek", "kek-file", "redis-url", "redis-prefix"}
	noEnv := func(string) (string, bool) { return "", false }
	for name, cmd := range commands() {
		paths := [][]string{{name}}
		if len(cmd.subs) > 0 {
			paths = nil
			for _, s := range cmd.subs {
				paths = append(paths, []string{name, s})
			}
		}
		for _, path := range paths {
			cmdline := strings.Join(path, " ")
			t.Run(cmdline, func(t *testing.T) {
				var out, errb bytes.Buffer
				if code := run(context.Background(), append(slices.Clone(path), "--help"), &out, &errb, noEnv); code != 0 {
					t.Fatalf("exit %d, want 0\n%s", code, errb.String())
				}
				help := errb.String()
				if !strings.HasPrefix(help, "Usage: lectern "+cmdline+" ") {
					t.Errorf("help does not start with its usage line:\n%s", help)
				}
				listed := map[string]string{}
				for _, m := range helpFlag.FindAllStringSubmatch(help, -1) {
					if _, twice := listed[m[1]]; twice {
						t.Errorf("--%s is listed twice", m[1])
					}
					listed[m[1]] = m[2]
				}
				for _, f := range serveOnly {
					if _, ok := listed[f]; ok != (name == "serve") {
						t.Errorf("--%s listed: %v", f, ok)
					}
				}
				for _, f := range logging {
					if _, ok := listed[f]; ok != (name == "serve" || name == "migrate") {
						t.Errorf("--%s listed: %v", f, ok)
					}
				}
				conn := strings.Index(help, "\nConnection:\n")
				if conn < 0 {
					t.Fatalf("no Connection group:\n%s", help)
				}
				for _, f := range connection {
					if i := strings.Index(help, "\n  --"+f+" "); i < conn {
						t.Errorf("--%s is not under Connection", f)
					}
				}
				ex := strings.Index(help, "\nExample:\n")
				if ex < 0 {
					ex = strings.Index(help, "\nExamples:\n")
				}
				if ex < 0 {
					t.Fatalf("no example:\n%s", help)
				}
				for _, line := range strings.Split(strings.TrimSpace(help[ex:]), "\n")[1:] {
					if !strings.Contains(line, "lectern "+cmdline) {
						t.Errorf("example %q does not run lectern %s", line, cmdline)
					}
					for _, f := range regexp.MustCompile(`--([a-z-]+)`).FindAllStringSubmatch(line, -1) {
						if _, ok := listed[f[1]]; !ok {
							t.Errorf("example %q uses --%s, which the command does not list", line, f[1])
						}
					}
				}
				// Each listed flag parses (the help after it stops the command
				// before it opens anything).
				for f, typ := range listed {
					arg := "--" + f + "=x"
					switch typ {
					case "":
						arg = "--" + f + "=true"
					case "int":
						arg = "--" + f + "=1"
					case "duration":
						arg = "--" + f + "=1s"
					}
					var o, e bytes.Buffer
					if code := run(context.Background(), append(slices.Clone(path), arg, "--help"), &o, &e, noEnv); code != 0 {
						t.Errorf("%s: exit %d\n%s", arg, code, e.String())
					}
				}
			})
		}
	}
}

// A command with subcommands names them, for --help (exit 0) and when
// none is given (exit 2); a secret from the environment never shows in a
// help text.
func TestHelpOfCommandsWithSubcommands(t *testing.T) {
	env := map[string]string{"LECTERN_KEK": "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", "DATABASE_URL": "postgres://u:hunter2@db/x"}
	getenv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for _, c := range []struct {
		args []string
		code int
	}{{[]string{"site", "--help"}, 0}, {[]string{"site"}, 2}, {[]string{"site", "frobnicate"}, 2}} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), c.args, &out, &errb, getenv); code != c.code ||
			!strings.Contains(errb.String(), "lectern site create|list|update") {
			t.Errorf("lectern %v: exit %d (want %d)\n%s", c.args, code, c.code, errb.String())
		}
	}
	for _, args := range [][]string{{"serve", "--help"}, {"client", "create", "--help"}, {"migrate", "--help"}} {
		var out, errb bytes.Buffer
		run(context.Background(), args, &out, &errb, getenv)
		if h := errb.String(); strings.Contains(h, "hunter2") || strings.Contains(h, env["LECTERN_KEK"]) || !strings.Contains(h, "env LECTERN_KEK") {
			t.Errorf("lectern %v --help shows a secret from the environment, or not the variable:\n%s", args, h)
		}
	}
}
