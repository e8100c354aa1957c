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
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/internal/server"
	"github.com/lectern/lectern/limits"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/cache"
	"github.com/lectern/lectern/tenant"
)

// adminCommand parses the command's own flags (define) and the
// connection flags, opens the app on a current schema and runs f.
func adminCommand(ctx context.Context, env *cmdEnv, name string, h help, args []string,
	define func(fs *cmdFlags), f func(a *server.App, fs *cmdFlags) error) error {
	fs := newCmdFlags(env, name, h)
	define(fs)
	var cfg config
	cfg.connection(fs, false)
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := cfg.checkConnection(fs); err != nil {
		return err
	}
	// Commands print their own results; warnings still follow the
	// deployment's log format.
	cfg.LogLevel, cfg.LogFormat = "warn", env.getenv("LECTERN_LOG_FORMAT")
	logger, err := cfg.logger(os.Stderr)
	if err != nil {
		return err
	}
	// Libraries that log through slog's default follow the command's
	// level and format; go-redis, which has a logger of its own, too.
	slog.SetDefault(logger)
	cache.SetRedisLogger(logger)
	a, err := server.Open(ctx, &cfg.Config, logger, server.OpenOptions{RequireCurrentSchema: true})
	if err != nil {
		return err
	}
	defer a.Close()
	return f(a, fs)
}

// subcommand picks the subcommand of name from args. Without one, or with
// -h/--help, it prints which there are.
func subcommand(env *cmdEnv, name string, subs []string, args []string) (string, []string, error) {
	list := func() {
		fmt.Fprintf(env.stderr, "usage: lectern %s %s [flags]\n", name, strings.Join(subs, "|"))
		fmt.Fprintf(env.stderr, "Run 'lectern %s %s --help' for its flags and an example.\n", name, subs[0])
	}
	if len(args) == 0 {
		list()
		return "", nil, errUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		list()
		return "", nil, errHelp
	}
	if !slices.Contains(subs, args[0]) {
		fmt.Fprintf(env.stderr, "lectern %s: unknown subcommand %q\n", name, args[0])
		list()
		return "", nil, errUsage
	}
	return args[0], args[1:], nil
}

func runMigrate(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newCmdFlags(env, "migrate", help{
		usage: "lectern migrate [flags]",
		about: "Apply the pending database migrations and exit. serve refuses a PostgreSQL schema that lacks " +
			"migrations, so run this first on every upgrade (deploy/k8s/migrate-job.yaml); the embedded default migrates by itself.",
		examples: []string{"DATABASE_URL=postgres://lectern@db:5432/lectern LECTERN_KEK_FILE=/run/secrets/kek lectern migrate"},
	})
	var cfg config
	cfg.logging(fs, false)
	cfg.connection(fs, false)
	if err := fs.parse(args); err != nil {
		return err
	}
	if err := cfg.checkConnection(fs); err != nil {
		return err
	}
	logger, err := cfg.logger(os.Stderr)
	if err != nil {
		return err
	}
	// Libraries that log through slog's default follow the command's
	// level and format; go-redis, which has a logger of its own, too.
	slog.SetDefault(logger)
	cache.SetRedisLogger(logger)
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
	_, args, err := subcommand(env, "seed", []string{"demo"}, args)
	if err != nil {
		return err
	}
	var port int
	return adminCommand(ctx, env, "seed demo", help{
		usage:    "lectern seed demo [--port 8080] [flags]",
		about:    "Create the demo sites, users, clients and catalog (DESIGN §7), with origins on --port. Nothing happens if they exist.",
		examples: []string{"lectern seed demo --port 8080"},
	}, args,
		func(fs *cmdFlags) { fs.IntVar(&port, "port", demo.DefaultPort, "port of the demo origins") },
		func(a *server.App, _ *cmdFlags) error {
			if _, err := demo.Seed(ctx, a.Platform, a.Store, port, time.Now()); err != nil {
				if errors.Is(err, demo.ErrSeeded) {
					fmt.Fprintln(env.stdout, "the demo sites exist already; nothing to do")
					return nil
				}
				return err
			}
			printBanner(env.stdout, port, "Created the demo sites; 'lectern serve' on port "+strconv.Itoa(port)+" serves them")
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
	SignUp              bool      `json:"signup"`
	MailFromName        string    `json:"mail_from_name"`
	MailFromAddress     string    `json:"mail_from_address"`
	CreatedAt           time.Time `json:"created_at"`
	UpdatedAt           time.Time `json:"updated_at"`
	// Limits are the provider's limits for the site (--limit) and the
	// operators' (admin API, admin area), by name.
	Limits         map[string]int `json:"limits"`
	OperatorLimits map[string]int `json:"operator_limits"`
}

func toSiteJSON(s *storage.Site) siteJSON {
	a := s.Accounts()
	nonNil := func(m map[string]int) map[string]int {
		if m == nil {
			return map[string]int{}
		}
		return m
	}
	return siteJSON{s.ID, s.Slug, s.Name, s.Origin, s.Aliases, string(s.RegistrationVariant), s.IDTokensEnabled,
		s.MCPConnectionsBeta, s.CIMDOpen, s.Description, s.Locale, a.SignUp, a.MailFromName, a.MailFromAddress, s.CreatedAt, s.UpdatedAt,
		nonNil(s.ProviderLimits()), nonNil(s.OperatorLimits())}
}

// limitNames lists the limits --limit knows, for its help.
func limitNames() string {
	var names []string
	for _, l := range limits.All {
		names = append(names, string(l.Name))
	}
	return strings.Join(names, ", ")
}

// applyLimitFlags sets the provider's limits of s from --limit values
// (name=value, or name= to hand the limit back to the operators).
func applyLimitFlags(s *storage.Site, sets []string) error {
	if len(sets) == 0 {
		return nil
	}
	m := s.ProviderLimits()
	if m == nil {
		m = map[string]int{}
	}
	for _, set := range sets {
		name, val, ok := strings.Cut(set, "=")
		if !ok {
			return fmt.Errorf("--limit %q: want name=value or name=", set)
		}
		if val == "" {
			if _, known := limits.Lookup(name); !known {
				return fmt.Errorf("--limit: no limit is called %q (there are %s)", name, limitNames())
			}
			delete(m, name)
			continue
		}
		n, err := strconv.Atoi(val)
		if err != nil {
			return fmt.Errorf("--limit %s: %q is not a whole number", name, val)
		}
		if err := limits.CheckProvider(name, n); err != nil {
			return fmt.Errorf("--limit %v (there are %s)", err, limitNames())
		}
		m[name] = n
	}
	s.SetProviderLimits(m)
	return nil
}

func runSite(ctx context.Context, env *cmdEnv, args []string) error {
	sub, args, err := subcommand(env, "site", []string{"create", "list", "update", "import"}, args)
	if err != nil {
		return err
	}
	if sub == "import" {
		return runSiteImport(ctx, env, args)
	}
	var (
		slug, name, origin, variant, description, locale, ref string
		mailFromName, mailFromAddress                         string
		aliases, limitSets                                    stringList
		idTokens, mcpBeta, cimdOpen, asJSON, clearAliases     bool
		signUp                                                bool
		rotationDays                                          int
	)
	siteFlags := func(fs *cmdFlags) {
		fs.StringVar(&name, "name", "", "display name")
		fs.StringVar(&origin, "origin", "", "origin, scheme://host[:port]: the issuer and RFC 8707 resource")
		fs.Var(&aliases, "alias", "further `host[:port]` that serves the site (repeatable)")
		fs.StringVar(&variant, "variant", "A", "registration variant: A (vendor platforms + CIMD) or B (open loopback registration)")
		fs.BoolVar(&idTokens, "id-tokens", false, "issue id_tokens (and advertise jwks_uri)")
		fs.BoolVar(&mcpBeta, "mcp-beta", false, `enable the "MCP connections" beta feature`)
		fs.BoolVar(&cimdOpen, "cimd-open", false, "accept Client ID Metadata Documents from any host")
		fs.StringVar(&description, "description", "", "description")
		fs.StringVar(&locale, "locale", "en", "locale")
		fs.BoolVar(&signUp, "signup", false, "let people create their own accounts (after verifying their e-mail address)")
		fs.StringVar(&mailFromName, "mail-from-name", "", "sender name of the site's mail (empty: the site's name)")
		fs.StringVar(&mailFromAddress, "mail-from-address", "", "sender address of the site's mail (empty: the platform's --mail-from)")
		fs.BoolVar(&asJSON, "json", false, "print the result as JSON")
		fs.IntVar(&rotationDays, "key-rotation-days", 0, "days a signing key signs before it is rotated (0: the platform's period)")
	}
	switch sub {
	case "create":
		return adminCommand(ctx, env, "site create", help{
			usage:    "lectern site create --slug S --name N --origin URL [flags]",
			about:    "Create a site, with its signing-key ring, and tell the running replicas.",
			examples: []string{`lectern site create --slug academy --name "Academy" --origin https://academy.example.com --id-tokens --mcp-beta`},
		}, args,
			func(fs *cmdFlags) {
				fs.StringVar(&slug, "slug", "", "short name (lower-case letters, digits, '-')")
				siteFlags(fs)
				fs.require("slug", "name", "origin")
			},
			func(a *server.App, _ *cmdFlags) error {
				s := &storage.Site{Slug: slug, Name: name, Origin: origin, Aliases: aliases,
					RegistrationVariant: tenant.Variant(strings.ToUpper(variant)), IDTokensEnabled: idTokens,
					MCPConnectionsBeta: mcpBeta, CIMDOpen: cimdOpen, Description: description, Locale: locale}
				s.SetAccounts(storage.AccountSettings{SignUp: signUp, MailFromName: mailFromName, MailFromAddress: mailFromAddress})
				if err := platform.SetKeyRotationDays(s, rotationDays); err != nil {
					return err
				}
				if err := checkSiteWrite(ctx, a, s); err != nil {
					return err
				}
				if err := checkKEK(ctx, a); err != nil {
					return err
				}
				if err := a.Platform.CreateSite(ctx, s); err != nil {
					return siteConflict(ctx, a, s, err)
				}
				audit(ctx, a, s.ID, "site.created", "site", map[string]any{"slug": s.Slug, "origin": s.Origin})
				return printResult(env.stdout, asJSON, toSiteJSON(s), fmt.Sprintf("created site %s (id %d) at %s", s.Slug, s.ID, s.Origin))
			})
	case "update":
		return adminCommand(ctx, env, "site update", help{
			usage: "lectern site update --site S [flags]",
			about: "Change a site: only the flags given change (--alias adds; --clear-aliases first removes the others).",
			examples: []string{"lectern site update --site academy --mcp-beta --alias www.academy.example.com",
				"lectern site update --site academy --limit token_per_client=120 --limit mcp_requests_per_site="},
		}, args,
			func(fs *cmdFlags) {
				fs.StringVar(&ref, "site", "", siteRefUsage)
				fs.StringVar(&slug, "slug", "", "new slug")
				fs.require("site")
				fs.BoolVar(&clearAliases, "clear-aliases", false, "remove every alias (before adding --alias ones)")
				fs.Var(&limitSets, "limit", "`name=value`: the site's value of a limit, which its operators then cannot change; name= hands it back to them (repeatable; "+limitNames()+")")
				siteFlags(fs)
			},
			func(a *server.App, fs *cmdFlags) error {
				s, err := siteByRef(ctx, a, ref)
				if err != nil {
					return err
				}
				acct := s.Accounts()
				fs.Visit(func(f *flag.Flag) {
					switch f.Name {
					case "signup":
						acct.SignUp = signUp
					case "mail-from-name":
						acct.MailFromName = mailFromName
					case "mail-from-address":
						acct.MailFromAddress = mailFromAddress
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
					case "key-rotation-days":
						err = platform.SetKeyRotationDays(s, rotationDays)
					}
				})
				s.SetAccounts(acct)
				if err != nil {
					return err
				}
				if clearAliases {
					s.Aliases = nil
				}
				// Adding an alias the site has already changes nothing.
				for _, al := range aliases {
					if !slices.ContainsFunc(s.Aliases, func(h string) bool { return strings.EqualFold(h, al) }) {
						s.Aliases = append(s.Aliases, al)
					}
				}
				if err := applyLimitFlags(s, limitSets); err != nil {
					return err
				}
				if err := checkSiteWrite(ctx, a, s); err != nil {
					return err
				}
				if err := a.Platform.UpdateSite(ctx, s); err != nil {
					return siteConflict(ctx, a, s, err)
				}
				var changed []string
				fs.Visit(func(f *flag.Flag) {
					if f.Name != "site" && f.Name != "json" {
						changed = append(changed, f.Name)
					}
				})
				details := map[string]any{"flags": changed}
				if len(limitSets) > 0 {
					details["limits"] = []string(limitSets)
				}
				audit(ctx, a, s.ID, "site.updated", "site", details)
				return printResult(env.stdout, asJSON, toSiteJSON(s), fmt.Sprintf("updated site %s (id %d)", s.Slug, s.ID))
			})
	case "list":
		return adminCommand(ctx, env, "site list", help{
			usage:    "lectern site list [--json]",
			about:    "List every site: a table, or with --json one JSON array.",
			examples: []string{"lectern site list --json"},
		}, args,
			func(fs *cmdFlags) { fs.BoolVar(&asJSON, "json", false, "print JSON") },
			func(a *server.App, _ *cmdFlags) error {
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
	return errUsage // subcommand admits only the three above
}

func runUser(ctx context.Context, env *cmdEnv, args []string) error {
	sub, args, err := subcommand(env, "user", []string{"create", "factors", "remove-factors"}, args)
	if err != nil {
		return err
	}
	switch sub {
	case "factors":
		return runUserFactors(ctx, env, args)
	case "remove-factors":
		return runUserRemoveFactors(ctx, env, args)
	}
	var (
		email, name, picture, pw string
		pwStdin, asJSON          bool
	)
	return adminCommand(ctx, env, "user create", help{
		usage:    "lectern user create --email E --name N (--password P | --password-stdin) [flags]",
		about:    "Create a platform user (accounts are platform-wide; roles give them access to sites).",
		examples: []string{`printf '%s\n' "$PASSWORD" | lectern user create --email ada@example.com --name "Ada Lovelace" --password-stdin`},
	}, args,
		func(fs *cmdFlags) {
			fs.StringVar(&email, "email", "", "e-mail address (unique, case-insensitive)")
			fs.StringVar(&name, "name", "", "name")
			fs.StringVar(&picture, "picture", "", "picture URL: https (http only for a loopback host); empty: the avatar the site generates")
			fs.StringVar(&pw, "password", "", "password (prefer --password-stdin: flags show in ps)")
			fs.BoolVar(&pwStdin, "password-stdin", false, "read the password from the first line of stdin")
			fs.BoolVar(&asJSON, "json", false, "print the result as JSON")
			fs.require("email", "name")
			fs.oneOf("password", "password-stdin")
		},
		func(a *server.App, fs *cmdFlags) error {
			// Invitations, sign-up and password reset read addresses with
			// NormalizeEmail; an account they cannot find is no account.
			addr, err := platform.NormalizeEmail(email)
			if err != nil {
				return err
			}
			if err := platform.CheckPicture(picture); err != nil {
				return err
			}
			if !pwStdin && pw == "" {
				return errors.New("a password is required: give --password-stdin (or --password)")
			}
			if pwStdin {
				line, err := bufio.NewReader(os.Stdin).ReadString('\n')
				if err != nil && !errors.Is(err, io.EOF) {
					return err
				}
				pw = strings.TrimRight(line, "\r\n")
			}
			u, err := a.Platform.CreateUser(ctx, addr, name, picture, pw)
			if errors.Is(err, storage.ErrConflict) {
				return fmt.Errorf("a user with the e-mail address %s exists already", addr)
			}
			if err != nil {
				return err
			}
			out := map[string]any{"id": u.ID, "email": u.Email, "name": u.Name, "picture": u.Picture, "created_at": u.CreatedAt}
			return printResult(env.stdout, asJSON, out, fmt.Sprintf("created user %s (%s)", u.Email, u.ID))
		})
}

func runRole(ctx context.Context, env *cmdEnv, args []string) error {
	sub, args, err := subcommand(env, "role", []string{"grant", "revoke"}, args)
	if err != nil {
		return err
	}
	var (
		ref, email, role string
		asJSON           bool
	)
	return adminCommand(ctx, env, "role "+sub, help{
		usage:    "lectern role " + sub + " --site S --user EMAIL --role owner|admin|lecturer|student [flags]",
		about:    "Give a user a role at a site, or take it away. owner, admin and lecturer are operator roles; student is a member.",
		examples: []string{"lectern role " + sub + " --site academy --user ada@example.com --role owner"},
	}, args,
		func(fs *cmdFlags) {
			fs.StringVar(&ref, "site", "", siteRefUsage)
			fs.StringVar(&email, "user", "", "the user's e-mail address")
			fs.StringVar(&role, "role", "", "owner, admin, lecturer or student")
			fs.BoolVar(&asJSON, "json", false, "print the result as JSON")
			fs.require("site", "user", "role")
		},
		func(a *server.App, _ *cmdFlags) error {
			s, err := siteByRef(ctx, a, ref)
			if err != nil {
				return err
			}
			if !storage.ValidRole(role) {
				return fmt.Errorf("role %q is not one of owner, admin, lecturer, student", role)
			}
			addr, err := platform.NormalizeEmail(email)
			if err != nil {
				return err
			}
			if _, err := a.Store.UserByEmail(ctx, addr); errors.Is(err, storage.ErrNotFound) {
				return fmt.Errorf("no user has the e-mail address %s (lectern user create)", addr)
			} else if err != nil {
				return err
			}
			var u *storage.User
			if sub == "grant" {
				u, err = a.Platform.GrantRole(ctx, s.ID, addr, role)
			} else {
				u, err = a.Platform.RevokeRole(ctx, s.ID, addr, role)
				if errors.Is(err, storage.ErrNotFound) {
					return fmt.Errorf("%s does not hold the role %s at %s", addr, role, s.Slug)
				}
			}
			if err != nil {
				return err
			}
			action := "role.granted"
			if sub == "revoke" {
				action = "role.revoked"
			}
			audit(ctx, a, s.ID, action, "user:"+u.ID, map[string]any{"role": role})
			roles, err := a.Store.RolesAt(ctx, s.ID, u.ID)
			if err != nil {
				return err
			}
			out := map[string]any{"site": s.Slug, "site_id": s.ID, "user_id": u.ID, "email": u.Email, "role": role, "roles": roles}
			return printResult(env.stdout, asJSON, out, fmt.Sprintf("%s now holds %v at %s", u.Email, roles, s.Slug))
		})
}

func runKeys(ctx context.Context, env *cmdEnv, args []string) error {
	sub, args, err := subcommand(env, "keys", []string{"rotate", "status"}, args)
	if err != nil {
		return err
	}
	if sub == "status" {
		return runKeysStatus(ctx, env, args)
	}
	var (
		ref        string
		activateIn time.Duration
		asJSON     bool
	)
	return adminCommand(ctx, env, "keys rotate", help{
		usage:    "lectern keys rotate --site S [--activate-in 1h] [flags]",
		about:    "Add a signing key to a site's ring. It is published in the JWKS at once and signs after --activate-in.",
		examples: []string{"lectern keys rotate --site academy --activate-in 1h"},
	}, args,
		func(fs *cmdFlags) {
			fs.StringVar(&ref, "site", "", siteRefUsage)
			fs.DurationVar(&activateIn, "activate-in", time.Hour, fmt.Sprintf("pre-publication delay: the new key is in the JWKS this long before it signs (0: at once; at most %s)", maxActivateIn))
			fs.BoolVar(&asJSON, "json", false, "print the result as JSON")
			fs.require("site")
		},
		func(a *server.App, fs *cmdFlags) error {
			if activateIn < 0 || activateIn > maxActivateIn {
				fmt.Fprintf(fs.Output(), "%s: --activate-in %s must be between 0s and %s\n", fs.Name(), activateIn, maxActivateIn)
				return errUsage
			}
			s, err := siteByRef(ctx, a, ref)
			if err != nil {
				return err
			}
			st, err := a.Keys.Status(ctx, s.ID)
			if err != nil {
				return err
			}
			if st.Pending != "" {
				return fmt.Errorf("site %s has a next key already: %s signs from %s; rotate again once it signs", s.Slug, st.Pending, st.PendingActivates.Format(time.RFC3339))
			}
			k, err := a.Platform.RotateKey(ctx, s.ID, activateIn)
			if err != nil {
				return err
			}
			// As the scheduler's rotations are (keys.Scheduler).
			audit(ctx, a, s.ID, "key.rotated", k.KID, map[string]any{"replaces": st.KID, "activates_at": k.ActivatesAt.UTC().Format(time.RFC3339)})
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

// siteRefUsage is the help of every --site flag.
const siteRefUsage = "site: its slug, or its ID in decimal (a slug wins over an ID of the same digits)"

// siteByRef finds the site --site names (platform.SiteByRef has the rule).
func siteByRef(ctx context.Context, a *server.App, ref string) (*storage.Site, error) {
	if ref == "" {
		return nil, errors.New("--site is required (a slug or an ID)")
	}
	s, err := platform.SiteByRef(ctx, a.Store, ref)
	if errors.Is(err, platform.ErrNoSite) {
		return nil, fmt.Errorf("no site %q (give its slug or its ID)", ref)
	}
	return s, err
}

// maxActivateIn bounds keys rotate --activate-in: a pending key holds back
// the rotation scheduler until it signs (docs/decisions.md, Operations).
const maxActivateIn = 7 * 24 * time.Hour

// checkSiteWrite refuses a site before it is written when a text is not
// text, a host is malformed for the resolver, or another site holds its
// slug or a host: the message names what collided, and the database logs
// no failed statement.
func checkSiteWrite(ctx context.Context, a *server.App, s *storage.Site) error {
	if err := platform.CheckSite(s); err != nil {
		return err
	}
	return a.Platform.SiteCollision(ctx, s)
}

// siteConflict turns a conflict of a site write (another writer won the
// race after checkSiteWrite) into the message that names what collided.
func siteConflict(ctx context.Context, a *server.App, s *storage.Site, err error) error {
	if !errors.Is(err, storage.ErrConflict) {
		return err
	}
	if named := a.Platform.SiteCollision(ctx, s); named != nil {
		return named
	}
	return err
}

// checkKEK refuses to seal anything new under a key-encryption key that
// did not seal the existing sites' keys (a mistyped LECTERN_KEK): one site's
// ring is enough to tell.
func checkKEK(ctx context.Context, a *server.App) error {
	sites, err := a.Store.ListSites(ctx, 0, 1)
	if err != nil || len(sites) == 0 {
		return err
	}
	return a.Keys.CheckKEK(ctx, sites[0].ID)
}
