// Package limits is the one list of the fleet's rate limits and budgets
// (issue 14): what each limit counts, its platform default (flags of
// `lectern serve`), the ceiling up to which a site's operators may raise
// it, and the per-site overrides a site carries (tenant.Site.Limits, from
// the site's settings). Handlers read a limit through Config with the
// request's context, as fosite reads GetAccessTokenLifespan(ctx), so a
// per-site override needs no new signature anywhere.
//
// It also holds Budgets, the per-site token buckets of a replica that keep
// one flooded site from taking the CPU every other site needs.
//
// It is a leaf: of ours it imports only tenant, so that authserver,
// memberapi, mcp, discovery, adminapi, web, the platform and the CLI can
// all share it.
package limits
