package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/server"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// adminCommand parses the shared settings plus the command's own flags,
// opens the app and runs f.
func adminCommand(ctx context.Context, env *cmdEnv, name string, args []string, o server.OpenOptions,
	define func(fs *flag.FlagSet), f func(a *server.App, fs *flag.FlagSet) error) error {
	fs := flag.NewFlagSet("lectern "+name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	var cfg config
	cfg.register(fs, env.getenv)
	define(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg.LogLevel = "warn" // commands print their own results
	logger, err := cfg.logger(os.Stderr)
	if err != nil {
		return err
	}
	// Libraries that log through slog's default (zitadel's route
	// registration) follow the command's level and format.
	slog.SetDefault(logger)
	a, err := server.Open(ctx, &cfg.Config, logger, o)
	if err != nil {
		return err
	}
	defer a.Close()
	return f(a, fs)
}

func runMigrate(ctx context.Context, env *cmdEnv, args []string) error {
	fs := flag.NewFlagSet("lectern migrate", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	var cfg config
	cfg.register(fs, env.getenv)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	logger, err := cfg.logger(os.Stderr)
	if err != nil {
		return err
	}
	// Libraries that log through slog's default (zitadel's route
	// registration) follow the command's level and format.
	slog.SetDefault(logger)
	a, err := server.Open(ctx, &cfg.Config, logger, server.OpenOptions{Migrate: true})
	if err != nil {
		return err
	}
	defer a.Close()
	v, err := a.Store.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "schema at version %d (%s)\n", v, a.Store.Dialect())
	return nil
}

func runSeed(ctx context.Context, env *cmdEnv, args []string) error {
	if len(args) == 0 || args[0] != "demo" {
		fmt.Fprintln(env.stderr, "usage: lectern seed demo [--port 8080]")
		return errUsage
	}
	var port int
	return adminCommand(ctx, env, "seed demo", args[1:], server.OpenOptions{RequireCurrentSchema: true},
		func(fs *flag.FlagSet) { fs.IntVar(&port, "port", demo.DefaultPort, "port of the demo origins") },
		func(a *server.App, _ *flag.FlagSet) error {
			if _, err := demo.Seed(ctx, a.Platform, a.Store, port, time.Now()); err != nil {
				if errors.Is(err, demo.ErrSeeded) {
					fmt.Fprintln(env.stdout, "the demo sites exist already; nothing to do")
					return nil
				}
				return err
			}
			printBanner(env.stdout, port)
			return nil
		})
}

// siteJSON is the --json form of a site.
type siteJSON struct {
	ID                  tenant.ID `json:"id"`
	Slug                string    `json:"slug"`
	Name                string    `json:"name"`
	Origin              string    `json:"origin"`
	Aliases             []string  `json:"aliases"`
	RegistrationVariant string    `json:"registration_variant"`
	IDTokensEnabled     bool      `json:"id_tokens_enabled"`
	MCPConnectionsBeta  bool      `json:"mcp_connections_beta"`
	CIMDOpen            bool      `json:"cimd_open"`
	Description         string    `json:"description"`
	Locale              string    `json:"locale"`
	CreatedAt           time.Time `json:"created_at"`
	UpdatedAt           time.Time `json:"updated_at"`
}

func toSiteJSON(s *storage.Site) siteJSON {
	return siteJSON{s.ID, s.Slug, s.Name, s.Origin, s.Aliases, string(s.RegistrationVariant), s.IDTokensEnabled,
		s.MCPConnectionsBeta, s.CIMDOpen, s.Description, s.Locale, s.CreatedAt, s.UpdatedAt}
}

func runSite(ctx context.Context, env *cmdEnv, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(env.stderr, "usage: lectern site create|list|update [flags]")
		return errUsage
	}
	sub, args := args[0], args[1:]
	var (
		slug, name, origin, variant, description, locale, ref string
		aliases                                               stringList
		idTokens, mcpBeta, cimdOpen, asJSON, clearAliases     bool
	)
	siteFlags := func(fs *flag.FlagSet) {
		fs.StringVar(&name, "name", "", "display name")
		fs.StringVar(&origin, "origin", "", "origin, scheme://host[:port]: the issuer and RFC 8707 resource")
		fs.Var(&aliases, "alias", "further host[:port] that serves the site (repeatable)")
		fs.StringVar(&variant, "variant", "A", "registration variant: A (vendor platforms + CIMD) or B (open loopback registration)")
		fs.BoolVar(&idTokens, "id-tokens", false, "issue id_tokens (and advertise jwks_uri)")
		fs.BoolVar(&mcpBeta, "mcp-beta", false, `enable the "MCP connections" beta feature`)
		fs.BoolVar(&cimdOpen, "cimd-open", false, "accept Client ID Metadata Documents from any host")
		fs.StringVar(&description, "description", "", "description")
		fs.StringVar(&locale, "locale", "en", "locale")
		fs.BoolVar(&asJSON, "json", false, "print the result as JSON")
	}
	switch sub {
	case "create":
		return adminCommand(ctx, env, "site create", args, server.OpenOptions{RequireCurrentSchema: true},
			func(fs *flag.FlagSet) {
				fs.StringVar(&slug, "slug", "", "short name (lower-case letters, digits, '-')")
				siteFlags(fs)
			},
			func(a *server.App, _ *flag.FlagSet) error {
				s := &storage.Site{Slug: slug, Name: name, Origin: origin, Aliases: aliases,
					RegistrationVariant: tenant.Variant(strings.ToUpper(variant)), IDTokensEnabled: idTokens,
					MCPConnectionsBeta: mcpBeta, CIMDOpen: cimdOpen, Description: description, Locale: locale}
				if err := a.Platform.CreateSite(ctx, s); err != nil {
					return err
				}
				return printResult(env.stdout, asJSON, toSiteJSON(s), fmt.Sprintf("created site %s (id %d) at %s", s.Slug, s.ID, s.Origin))
			})
	case "update":
		return adminCommand(ctx, env, "site update", args, server.OpenOptions{RequireCurrentSchema: true},
			func(fs *flag.FlagSet) {
				fs.StringVar(&ref, "site", "", "site slug or ID")
				fs.StringVar(&slug, "slug", "", "new slug")
				fs.BoolVar(&clearAliases, "clear-aliases", false, "remove every alias (before adding --alias ones)")
				siteFlags(fs)
			},
			func(a *server.App, fs *flag.FlagSet) error {
				s, err := siteByRef(ctx, a, ref)
				if err != nil {
					return err
				}
				fs.Visit(func(f *flag.Flag) {
					switch f.Name {
					case "slug":
						s.Slug = slug
					case "name":
						s.Name = name
					case "origin":
						s.Origin = origin
					case "variant":
						s.RegistrationVariant = tenant.Variant(strings.ToUpper(variant))
					case "id-tokens":
						s.IDTokensEnabled = idTokens
					case "mcp-beta":
						s.MCPConnectionsBeta = mcpBeta
					case "cimd-open":
						s.CIMDOpen = cimdOpen
					case "description":
						s.Description = description
					case "locale":
						s.Locale = locale
					}
				})
				if clearAliases {
					s.Aliases = nil
				}
				s.Aliases = append(s.Aliases, aliases...)
				if err := a.Platform.UpdateSite(ctx, s); err != nil {
					return err
				}
				return printResult(env.stdout, asJSON, toSiteJSON(s), fmt.Sprintf("updated site %s (id %d)", s.Slug, s.ID))
			})
	case "list":
		return adminCommand(ctx, env, "site list", args, server.OpenOptions{RequireCurrentSchema: true},
			func(fs *flag.FlagSet) { fs.BoolVar(&asJSON, "json", false, "print JSON") },
			func(a *server.App, _ *flag.FlagSet) error {
				var all []siteJSON
				for after := tenant.ID(0); ; {
					page, err := a.Store.ListSites(ctx, after, 500)
					if err != nil {
						return err
					}
					for i := range page {
						all = append(all, toSiteJSON(&page[i]))
					}
					if len(page) < 500 {
						break
					}
					after = page[len(page)-1].ID
				}
				if asJSON {
					if all == nil {
						all = []siteJSON{}
					}
					return json.NewEncoder(env.stdout).Encode(all)
				}
				tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "ID\tSLUG\tORIGIN\tVARIANT\tNAME")
				for _, s := range all {
					fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", s.ID, s.Slug, s.Origin, s.RegistrationVariant, s.Name)
				}
				return tw.Flush()
			})
	}
	fmt.Fprintf(env.stderr, "lectern site: unknown subcommand %q (create, list, update)\n", sub)
	return errUsage
}

func runUser(ctx context.Context, env *cmdEnv, args []string) error {
	if len(args) == 0 || args[0] != "create" {
		fmt.Fprintln(env.stderr, "usage: lectern user create --email E --name N (--password P | --password-stdin) [--json]")
		return errUsage
	}
	var (
		email, name, picture, pw string
		pwStdin, asJSON          bool
	)
	return adminCommand(ctx, env, "user create", args[1:], server.OpenOptions{RequireCurrentSchema: true},
		func(fs *flag.FlagSet) {
			fs.StringVar(&email, "email", "", "e-mail address (unique, case-insensitive)")
			fs.StringVar(&name, "name", "", "name")
			fs.StringVar(&picture, "picture", "", "picture URL")
			fs.StringVar(&pw, "password", "", "password (prefer --password-stdin: flags show in ps)")
			fs.BoolVar(&pwStdin, "password-stdin", false, "read the password from the first line of stdin")
			fs.BoolVar(&asJSON, "json", false, "print the result as JSON")
		},
		func(a *server.App, _ *flag.FlagSet) error {
			if pwStdin {
				line, err := bufio.NewReader(os.Stdin).ReadString('\n')
				if err != nil && !errors.Is(err, io.EOF) {
					return err
				}
				pw = strings.TrimRight(line, "\r\n")
			}
			u, err := a.Platform.CreateUser(ctx, email, name, picture, pw)
			if err != nil {
				return err
			}
			out := map[string]any{"id": u.ID, "email": u.Email, "name": u.Name, "picture": u.Picture, "created_at": u.CreatedAt}
			return printResult(env.stdout, asJSON, out, fmt.Sprintf("created user %s (%s)", u.Email, u.ID))
		})
}

func runRole(ctx context.Context, env *cmdEnv, args []string) error {
	if len(args) == 0 || (args[0] != "grant" && args[0] != "revoke") {
		fmt.Fprintln(env.stderr, "usage: lectern role grant|revoke --site S --user EMAIL --role owner|admin|lecturer|student [--json]")
		return errUsage
	}
	sub := args[0]
	var (
		ref, email, role string
		asJSON           bool
	)
	return adminCommand(ctx, env, "role "+sub, args[1:], server.OpenOptions{RequireCurrentSchema: true},
		func(fs *flag.FlagSet) {
			fs.StringVar(&ref, "site", "", "site slug or ID")
			fs.StringVar(&email, "user", "", "the user's e-mail address")
			fs.StringVar(&role, "role", "", "owner, admin, lecturer or student")
			fs.BoolVar(&asJSON, "json", false, "print the result as JSON")
		},
		func(a *server.App, _ *flag.FlagSet) error {
			s, err := siteByRef(ctx, a, ref)
			if err != nil {
				return err
			}
			var u *storage.User
			if sub == "grant" {
				u, err = a.Platform.GrantRole(ctx, s.ID, email, role)
			} else {
				u, err = a.Platform.RevokeRole(ctx, s.ID, email, role)
			}
			if err != nil {
				return err
			}
			roles, err := a.Store.RolesAt(ctx, s.ID, u.ID)
			if err != nil {
				return err
			}
			out := map[string]any{"site": s.Slug, "site_id": s.ID, "user_id": u.ID, "email": u.Email, "role": role, "roles": roles}
			return printResult(env.stdout, asJSON, out, fmt.Sprintf("%s now holds %v at %s", u.Email, roles, s.Slug))
		})
}

func runKeys(ctx context.Context, env *cmdEnv, args []string) error {
	if len(args) == 0 || args[0] != "rotate" {
		fmt.Fprintln(env.stderr, "usage: lectern keys rotate --site S [--activate-in 1h] [--json]")
		return errUsage
	}
	var (
		ref        string
		activateIn time.Duration
		asJSON     bool
	)
	return adminCommand(ctx, env, "keys rotate", args[1:], server.OpenOptions{RequireCurrentSchema: true},
		func(fs *flag.FlagSet) {
			fs.StringVar(&ref, "site", "", "site slug or ID")
			fs.DurationVar(&activateIn, "activate-in", time.Hour, "pre-publication delay: the new key is in the JWKS this long before it signs (0: at once)")
			fs.BoolVar(&asJSON, "json", false, "print the result as JSON")
		},
		func(a *server.App, _ *flag.FlagSet) error {
			s, err := siteByRef(ctx, a, ref)
			if err != nil {
				return err
			}
			k, err := a.Platform.RotateKey(ctx, s.ID, activateIn)
			if err != nil {
				return err
			}
			out := map[string]any{"site": s.Slug, "site_id": s.ID, "kid": k.KID, "alg": k.Alg, "state": k.State, "activates_at": k.ActivatesAt}
			return printResult(env.stdout, asJSON, out, fmt.Sprintf("site %s: key %s published, signs from %s", s.Slug, k.KID, k.ActivatesAt.Format(time.RFC3339)))
		})
}

// printResult prints v as one JSON document (--json) or the human line.
func printResult(w io.Writer, asJSON bool, v any, human string) error {
	if asJSON {
		return json.NewEncoder(w).Encode(v)
	}
	_, err := fmt.Fprintln(w, human)
	return err
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// siteByRef finds a site by slug or numeric ID.
func siteByRef(ctx context.Context, a *server.App, ref string) (*storage.Site, error) {
	if ref == "" {
		return nil, errors.New("--site is required (a slug or an ID)")
	}
	s, err := a.Store.SiteBySlug(ctx, ref)
	if errors.Is(err, storage.ErrNotFound) {
		var id int64
		if _, scanErr := fmt.Sscan(ref, &id); scanErr == nil {
			return a.Store.SiteByID(ctx, tenant.ID(id))
		}
		return nil, fmt.Errorf("no site %q", ref)
	}
	return s, err
}
