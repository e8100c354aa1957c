package limits

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/lectern/lectern/tenant"
)

// Name names a limit. The names are the keys of a site's overrides (in its
// settings), of the admin API's limits document and of the CLI's --limit.
type Name string

// The limits. Each is a count of events per period (Limit.Per), except
// PendingAuthorizations, a count of things held at once.
const (
	// TokenPerClient: token requests per second per client and site, on
	// every replica together (the shared limiter in the cache).
	TokenPerClient Name = "token_per_client"
	// TokenPerSite: token requests per second per site, per replica (a
	// budget: see Budgets).
	TokenPerSite Name = "token_per_site"
	// RegisterPerIP: client registrations per minute per IP and site.
	RegisterPerIP Name = "register_per_ip"
	// AuthorizePerIP: anonymous authorization requests (no session yet)
	// per minute per IP, at every site together: what one address may
	// make the cache hold, whatever the number of sites. An authorization
	// that makes the server fetch a Client ID Metadata Document not yet
	// cached is charged before the fetch, session or not (once: not again
	// when it is stored).
	AuthorizePerIP Name = "authorize_per_ip"
	// AuthorizePerSite: anonymous authorization requests per second per
	// site, and document fetches as for AuthorizePerIP.
	AuthorizePerSite Name = "authorize_per_site"
	// PendingAuthorizations: sign-ins in progress (authorization requests
	// waiting for sign-in or consent) a site holds at once.
	PendingAuthorizations Name = "pending_authorizations"
	// LoginFailuresPerAccountIP: failed sign-ins per 15 minutes for one
	// account from one IP; beyond it that pair is refused until the window
	// ends. Accounts are platform-wide, so failures count at every site.
	LoginFailuresPerAccountIP Name = "login_failures_per_account_ip"
	// LoginFailuresPerIP: failed sign-ins per 15 minutes from one IP,
	// whatever the account; beyond it the IP is refused.
	LoginFailuresPerIP Name = "login_failures_per_ip"
	// LoginFailuresPerAccount: failed sign-ins per 15 minutes for one
	// account from anywhere; beyond it every IP must wait between attempts
	// on that account (a wait that grows), never a lockout.
	LoginFailuresPerAccount Name = "login_failures_per_account"
	// LoginChecksPerSite: password checks (argon2id, each tens of
	// milliseconds of every core) per second per site, per replica.
	LoginChecksPerSite Name = "login_checks_per_site"
	// GraphQLCostPerSite: Member API cost per second per site, per replica
	// (a request costs 1, plus 1 per connection it reads, plus 1 per 50
	// nodes it may return).
	GraphQLCostPerSite Name = "graphql_cost_per_site"
	// MCPRequestsPerSite: /mcp requests per second per site, per replica.
	MCPRequestsPerSite Name = "mcp_requests_per_site"
)

// Limit describes one limit.
type Limit struct {
	Name Name
	// Title and Unit say what is counted, for people (admin area, API
	// document, help).
	Title string
	Unit  string
	// Per is the period of a rate; 0 for a count held at once.
	Per time.Duration
	// Default is the built-in platform default (the serve flag's default).
	Default int
	// TightenOnly limits may not be raised by a site's operators above the
	// platform default: they protect platform-wide accounts, which every
	// other site shares.
	TightenOnly bool
	// Flag is the serve flag (and, upper-cased with LECTERN_ and
	// underscores, the environment variable) of the platform default.
	Flag string
}

// All lists every limit, in the order people see them.
var All = []Limit{
	{TokenPerClient, "Token requests per client", "requests per second, per client (all replicas)", time.Second, 30, false, "limit-token-per-client"},
	{TokenPerSite, "Token requests per site", "requests per second, per replica", time.Second, 200, false, "limit-token-per-site"},
	{RegisterPerIP, "Client registrations per IP", "registrations per minute, per IP address", time.Minute, 10, false, "limit-register-per-ip"},
	{AuthorizePerIP, "Sign-ins started per IP", "authorization requests without a session, per minute, per IP address (all sites together)", time.Minute, 300, false, "limit-authorize-per-ip"},
	{AuthorizePerSite, "Sign-ins started per site", "authorization requests without a session, per second", time.Second, 20, false, "limit-authorize-per-site"},
	{PendingAuthorizations, "Sign-ins in progress", "pending authorization requests at once (each lives 15 minutes)", 0, 2000, false, "limit-pending-authorizations"},
	{LoginFailuresPerAccountIP, "Failed sign-ins per account and IP", "failures per 15 minutes for one account from one IP address", 15 * time.Minute, 10, true, "limit-login-failures-per-account-ip"},
	{LoginFailuresPerIP, "Failed sign-ins per IP", "failures per 15 minutes from one IP address, any account", 15 * time.Minute, 100, true, "limit-login-failures-per-ip"},
	{LoginFailuresPerAccount, "Failed sign-ins per account before a wait", "failures per 15 minutes for one account from anywhere", 15 * time.Minute, 100, true, "limit-login-failures-per-account"},
	{LoginChecksPerSite, "Password checks per site", "sign-ins checked per second, per replica", time.Second, 5, false, "limit-login-checks-per-site"},
	{GraphQLCostPerSite, "Member API cost per site", "cost units per second, per replica", time.Second, 300, false, "limit-graphql-cost-per-site"},
	{MCPRequestsPerSite, "MCP requests per site", "requests per second, per replica", time.Second, 100, false, "limit-mcp-requests-per-site"},
}

// Lookup returns the limit called name.
func Lookup(name string) (Limit, bool) {
	i := slices.IndexFunc(All, func(l Limit) bool { return string(l.Name) == name })
	if i < 0 {
		return Limit{}, false
	}
	return All[i], true
}

func mustLookup(n Name) Limit {
	l, ok := Lookup(string(n))
	if !ok {
		panic("limits: unknown limit " + string(n))
	}
	return l
}

// MaxValue bounds every value, the provider's included: a counter beyond
// it means "no limit" in all but name, and the arithmetic stays far from
// overflow.
const MaxValue = 1_000_000_000

// DefaultCeilingFactor is how far above the platform default a site's
// operators may raise a limit unless --limit-ceiling-factor says otherwise.
const DefaultCeilingFactor = 10

// Config is the platform's limits: defaults (from flags) and the operators'
// ceiling. A nil *Config, or a zero one, gives the built-in defaults. It
// must not change once handlers use it.
type Config struct {
	// Defaults replace built-in defaults, by name; absent or non-positive
	// values keep the built-in one.
	Defaults map[Name]int
	// CeilingFactor: operators may set a limit up to this many times its
	// platform default (TightenOnly limits: up to the default). Default
	// DefaultCeilingFactor.
	CeilingFactor int
}

// Default is the platform default of n.
func (c *Config) Default(n Name) int {
	if c != nil {
		if v, ok := c.Defaults[n]; ok && v > 0 {
			return min(v, MaxValue)
		}
	}
	return mustLookup(n).Default
}

// Ceiling is the highest value a site's operators may give n.
func (c *Config) Ceiling(n Name) int {
	d := c.Default(n)
	if mustLookup(n).TightenOnly {
		return d
	}
	f := DefaultCeilingFactor
	if c != nil && c.CeilingFactor > 0 {
		f = c.CeilingFactor
	}
	return int(min(int64(d)*int64(f), MaxValue))
}

// ForSite is the value of n at site: the provider's value for the site,
// else the operators' (held to today's ceiling, which the platform may
// have lowered since), else the platform default. A nil site gets the
// default.
func (c *Config) ForSite(site *tenant.Site, n Name) int {
	if site != nil {
		if v, ok := site.ProviderLimits[string(n)]; ok && v > 0 {
			return min(v, MaxValue)
		}
		if v, ok := site.OperatorLimits[string(n)]; ok && v > 0 {
			return min(v, c.Ceiling(n))
		}
	}
	return c.Default(n)
}

// Get is the value of n at the request's site (tenant.FromContext).
func (c *Config) Get(ctx context.Context, n Name) int {
	site, _ := tenant.FromContext(ctx)
	return c.ForSite(site, n)
}

// Rate is the value of n at the request's site and the period it counts
// over.
func (c *Config) Rate(ctx context.Context, n Name) (count int, per time.Duration) {
	return c.Get(ctx, n), mustLookup(n).Per
}

// ValueError says why a value cannot be set; Name is the limit's.
type ValueError struct {
	Name   string
	Reason string
}

func (e *ValueError) Error() string { return e.Name + ": " + e.Reason }

// CheckOperator reports whether a site's operators may set n to v: a
// known limit, 1 to its ceiling.
func (c *Config) CheckOperator(name string, v int) error {
	l, ok := Lookup(name)
	if !ok {
		return &ValueError{name, "no such limit"}
	}
	if ceil := c.Ceiling(l.Name); v < 1 || v > ceil {
		why := "must be between 1 and " + strconv.Itoa(ceil)
		if l.TightenOnly {
			why += " (the platform default: sign-in limits protect accounts every site shares, so a site may only tighten them)"
		} else {
			why += " (the platform's ceiling)"
		}
		return &ValueError{name, why}
	}
	return nil
}

// CheckProvider reports whether the hosting provider may set n to v: a
// known limit, 1 to MaxValue.
func CheckProvider(name string, v int) error {
	if _, ok := Lookup(name); !ok {
		return &ValueError{name, "no such limit"}
	}
	if v < 1 || v > MaxValue {
		return &ValueError{name, fmt.Sprintf("must be between 1 and %d", MaxValue)}
	}
	return nil
}
