package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/lectern/lectern/authserver/clientmeta"
	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/internal/server"
	"github.com/lectern/lectern/storage"
)

// clientJSON is the --json form of a client. The secret appears only when
// it was just created.
type clientJSON struct {
	ClientID     string   `json:"client_id"`
	ClientSecret string   `json:"client_secret,omitempty"`
	Site         string   `json:"site,omitempty"`
	Name         string   `json:"client_name"`
	Audience     string   `json:"audience"`
	Type         string   `json:"type"`
	AuthMethod   string   `json:"token_endpoint_auth_method"`
	RedirectURIs []string `json:"redirect_uris"`
	Scope        string   `json:"scope"`
	Source       string   `json:"source"`
	// ResourceServer: it may introspect other clients' access tokens.
	ResourceServer bool `json:"resource_server"`
}

func toClientJSON(c *storage.Client, site, secret string) clientJSON {
	method := "none"
	if c.Type == storage.ClientConfidential {
		method = "client_secret_post"
	}
	return clientJSON{c.ClientID, secret, site, c.Name, c.Audience, c.Type, method, c.RedirectURIs, scope.Join(c.Scopes), c.Source, c.ResourceServer}
}

func runClient(ctx context.Context, env *cmdEnv, args []string) error {
	_, args, err := subcommand(env, "client", []string{"create"}, args)
	if err != nil {
		return err
	}
	var (
		ref, name, audience, scopes string
		redirects                   stringList
		confidential, asJSON        bool
		resourceServer              bool
	)
	return adminCommand(ctx, env, "client create", help{
		usage: "lectern client create --site S --name N --redirect-uri U [flags]",
		about: "Create an OAuth client at a site, such as a member application (DESIGN §6). A confidential client's secret is shown once.",
		examples: []string{
			`lectern client create --site academy --name "Study Buddy" --redirect-uri https://buddy.example/callback`,
			`lectern client create --site academy --name "Course API" --confidential --resource-server --redirect-uri https://api.academy.example/cb`,
		},
	}, args,
		func(fs *cmdFlags) {
			fs.StringVar(&ref, "site", "", siteRefUsage)
			fs.StringVar(&name, "name", "", "the application's name, shown on the consent page")
			fs.Var(&redirects, "redirect-uri", "a redirect `URI`: https, or loopback http (any port) (repeatable)")
			fs.StringVar(&audience, "audience", storage.AudienceMember, "member (the site's members' own data) or operator (administration)")
			fs.StringVar(&scopes, "scope", "", "space-separated scopes it may request (default for members: "+scope.Join(scope.MemberDefault())+")")
			fs.BoolVar(&confidential, "confidential", false, "a confidential client with a secret (client_secret_post), shown once")
			fs.BoolVar(&resourceServer, "resource-server", false, "one of the site's resource servers: it may introspect every client's access tokens (needs --confidential); other clients introspect only their own")
			fs.BoolVar(&asJSON, "json", false, "print the result as JSON")
		},
		func(a *server.App, _ *cmdFlags) error {
			s, err := siteByRef(ctx, a, ref)
			if err != nil {
				return err
			}
			c, secret, err := a.Platform.CreateClient(ctx, s.ID, clientmeta.ClientSpec{
				Name: name, RedirectURIs: redirects, Scopes: scope.Parse(scopes), Audience: audience,
				Confidential: confidential, Source: storage.SourceAdmin, Reviewed: true, CreatedBy: "lectern client create",
				ResourceServer: resourceServer,
			})
			if err != nil {
				return err
			}
			audit(ctx, a, s.ID, "client.created", c.ClientID, map[string]any{"name": c.Name, "audience": c.Audience, "type": c.Type, "resource_server": c.ResourceServer})
			return printResult(env.stdout, asJSON, toClientJSON(c, s.Slug, secret), fmt.Sprintf("created %s client %s at %s%s", c.Audience, c.ClientID, s.Slug, secretNote(secret)))
		})
}

func secretNote(secret string) string {
	if secret == "" {
		return ""
	}
	return "\nclient_secret (shown once): " + secret
}

func runVendor(ctx context.Context, env *cmdEnv, args []string) error {
	_, args, err := subcommand(env, "vendor", []string{"add"}, args)
	if err != nil {
		return err
	}
	var (
		name, scopes       string
		aliases, redirects stringList
		asJSON             bool
	)
	return adminCommand(ctx, env, "vendor add", help{
		usage:    "lectern vendor add --name N --redirect-uri U [flags]",
		about:    "Register a vendor platform: Variant A sites answer its registration (by client_name) with one platform-wide operator client.",
		examples: []string{`lectern vendor add --name "Course Pilot" --client-name CoursePilot --redirect-uri https://coursepilot.example/oauth/callback`},
	}, args,
		func(fs *cmdFlags) {
			fs.StringVar(&name, "name", "", "the vendor platform's name")
			fs.Var(&aliases, "client-name", "a client `name` the platform registers with (repeatable; default: --name)")
			fs.Var(&redirects, "redirect-uri", "a redirect `URI` of the platform (repeatable)")
			fs.StringVar(&scopes, "scope", "", "space-separated operator scopes (default: identity and every operator scope)")
			fs.BoolVar(&asJSON, "json", false, "print the result as JSON")
		},
		func(a *server.App, _ *cmdFlags) error {
			v, c, err := a.Platform.AddVendor(ctx, name, aliases, redirects, scope.Parse(scopes))
			if err != nil {
				return err
			}
			out := struct {
				clientJSON
				ClientNames []string `json:"client_names"`
			}{toClientJSON(c, "", ""), v.ClientNames}
			return printResult(env.stdout, asJSON, out, fmt.Sprintf("vendor platform %q registered: client_id %s (Variant A sites match client_name %q)", v.Name, v.ClientID, strings.Join(v.ClientNames, `", "`)))
		})
}

func runCIMD(ctx context.Context, env *cmdEnv, args []string) error {
	_, args, err := subcommand(env, "cimd", []string{"allow"}, args)
	if err != nil {
		return err
	}
	var (
		host, ref        string
		reviewed, asJSON bool
	)
	return adminCommand(ctx, env, "cimd allow", help{
		usage:    "lectern cimd allow --host H [--site S] [--reviewed] [flags]",
		about:    "Accept Client ID Metadata Documents from a host, at one site or at every site. Until --reviewed, its clients get read and identity scopes only.",
		examples: []string{"lectern cimd allow --host tools.example.com --site academy --reviewed"},
	}, args,
		func(fs *cmdFlags) {
			fs.StringVar(&host, "host", "", "host[:port] of Client ID Metadata Documents to accept")
			fs.StringVar(&ref, "site", "", "only at this site: its slug, or its ID in decimal (default: every site)")
			fs.BoolVar(&reviewed, "reviewed", false, "its clients are reviewed: they may get write scopes too")
			fs.BoolVar(&asJSON, "json", false, "print the result as JSON")
		},
		func(a *server.App, _ *cmdFlags) error {
			h, err := a.Platform.AllowCIMDHost(ctx, host, ref, reviewed)
			if err != nil {
				return err
			}
			if h.SiteID != nil {
				// At every site it is the provider's setting, no site's.
				audit(ctx, a, *h.SiteID, "cimd.host_allowed", h.Host, map[string]any{"reviewed": h.Reviewed})
			}
			scopeName := "every site"
			if h.SiteID != nil {
				scopeName = "site " + ref
			}
			out := map[string]any{"host": h.Host, "site": ref, "site_id": h.SiteID, "reviewed": h.Reviewed}
			return printResult(env.stdout, asJSON, out, fmt.Sprintf("Client ID Metadata Documents from %s are accepted at %s (reviewed: %v)", h.Host, scopeName, h.Reviewed))
		})
}
