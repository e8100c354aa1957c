package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sort"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.LookupEnv))
}

// command is one command of lectern.
type command struct {
	summary string
	// subs are its subcommands (site create, site list ...); none for
	// serve and migrate.
	subs []string
	run  func(ctx context.Context, env *cmdEnv, args []string) error
}

// cmdEnv is what a command gets from the process: streams and environment.
type cmdEnv struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	// lookupEnv tells a variable set to "" from one not set, for the
	// settings where empty means "none" (--metrics-addr).
	lookupEnv func(string) (string, bool)
}

func commands() map[string]command {
	return map[string]command{
		"serve":   {"serve every site (embedded default when DATABASE_URL is unset)", nil, runServe},
		"migrate": {"apply pending database migrations and exit", nil, runMigrate},
		"seed":    {"seed demo: create the demo sites, users, clients and catalog", []string{"demo"}, runSeed},
		"site":    {"site create|list|update|import: manage sites", []string{"create", "list", "update", "import"}, runSite},
		"user":    {"user create|factors|remove-factors: create a platform user; list or remove an account's second factors", []string{"create", "factors", "remove-factors"}, runUser},
		"role":    {"role grant|revoke: give a user a role at a site", []string{"grant", "revoke"}, runRole},
		"keys":    {"keys rotate|status: add a signing key to a site's ring; when each site's key rotates", []string{"rotate", "status"}, runKeys},
		"kek":     {"kek rotate: re-seal every signing key under the current key-encryption key", []string{"rotate"}, runKEK},
		"client":  {"client create: create an OAuth client (e.g. a member application) at a site", []string{"create"}, runClient},
		"vendor":  {"vendor add: register a vendor platform for Variant A sites", []string{"add"}, runVendor},
		"cimd":    {"cimd allow: accept Client ID Metadata Documents from a host", []string{"allow"}, runCIMD},
	}
}

// run is main without the process (lookupEnv is os.LookupEnv): it returns
// the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) int {
	getenv := func(k string) string { v, _ := lookupEnv(k); return v }
	env := &cmdEnv{stdout: stdout, stderr: stderr, getenv: getenv, lookupEnv: lookupEnv}
	if len(args) > 1 && args[0] == "help" {
		// lectern help site [create] is lectern site [create] --help.
		args = append(slices.Clone(args[1:]), "--help")
	}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := commands()[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "lectern: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	switch err := cmd.run(ctx, env, args[1:]); {
	case err == nil, errors.Is(err, errHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	default:
		// The error names the whole command: lectern site update, not
		// lectern site.
		name := args[0]
		if len(args) > 1 && slices.Contains(cmd.subs, args[1]) {
			name += " " + args[1]
		}
		fmt.Fprintf(stderr, "lectern %s: %v\n", name, err)
		return 1
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: lectern <command> [flags]\n\ncommands:")
	cmds := commands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'lectern <command> --help' for the flags of a command and an example.")
	fmt.Fprintln(w, "Connection, logging and serve flags also read an environment variable, named in their help.")
}
