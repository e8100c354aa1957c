package sqlstore_test

import (
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// distributedTables are the tables a Citus deployment distributes by
// site_id, co-located (docs/SCALE.md): every site-owned table. sites,
// site_hosts, users, vendor_integrations and leases are reference (or
// separately distributed) tables.
var distributedTables = []string{
	"site_keys", "site_roles", "clients", "cimd_hosts", "grants", "refresh_tokens", "consents", "audit_events",
	"revoked_tokens", "courses", "lecturers", "course_lecturers", "sections", "lectures", "enrollments",
	"lecture_progress", "digital_products", "digital_product_purchases", "consulting_services",
	"consulting_purchases", "events", "event_registrations", "notifications", "notification_subscriptions",
	"membership_plans", "orders", "order_items", "coupons", "posts", "pages", "comments", "forms",
	"form_submissions", "files", "appearance", "subscriptions",
}

// siteQueryExceptions are statements on distributed tables that do not
// name one site, each with why that is right. An exception that matches
// nothing fails the test too, so the list stays true.
var siteQueryExceptions = []struct {
	match *regexp.Regexp
	why   string
}{
	{regexp.MustCompile(`^DELETE FROM "clients" WHERE source = \$1 AND last_used_at IS NULL`),
		"PurgeUnusedClients: the hourly clean-up of abandoned registrations, a fleet-wide sweep; Citus runs it on every shard in parallel"},
	{regexp.MustCompile(`FROM "site_roles" JOIN sites ON sites.id = site_roles.site_id WHERE site_roles.user_id = \$1`),
		"SitesOfUser: a person's schools across the fleet, by nature every site; at a million sites a copy keyed by user (user_sites, distributed by user_id) serves it from one shard"},
}

var (
	tableRef      = regexp.MustCompile(`(?i)\b(?:from|join|into|update)\s+"?([a-z_]+)"?`)
	sitePredicate = regexp.MustCompile(`(?i)"?site_id"?\s*(?:=|\bin\b|\bis\b)`)
	insertInto    = regexp.MustCompile(`(?is)\binsert\s+into\s+"?[a-z_]+"?\s*\(([^)]*)\)`)
	hasWhere      = regexp.MustCompile(`(?i)\bwhere\b`)
)

// statementLog records the statements a store sends (sqlstore.Options
// OnStatement).
type statementLog struct {
	mu    sync.Mutex
	stmts map[string]bool
}

func (l *statementLog) record(sql string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stmts == nil {
		l.stmts = map[string]bool{}
	}
	l.stmts[sql] = true
}

// checkSiteQueries checks that every recorded statement on a distributed
// table carries a site_id predicate or value, so that on Citus it routes to
// one shard (TestStoreContract runs it after the PostgreSQL contract).
func checkSiteQueries(t *testing.T, log *statementLog) {
	log.mu.Lock()
	stmts := log.stmts
	log.mu.Unlock()
	used := make([]bool, len(siteQueryExceptions))
	var bad []string
	checked := 0
	for sql := range stmts {
		onDistributed, routed := routesToSite(sql)
		if !onDistributed {
			continue
		}
		checked++
		if routed {
			continue
		}
		excused := false
		for i, e := range siteQueryExceptions {
			if e.match.MatchString(sql) {
				used[i], excused = true, true
			}
		}
		if !excused {
			bad = append(bad, sql)
		}
	}
	slices.Sort(bad)
	for _, sql := range bad {
		t.Errorf("statement on a distributed table without a site_id predicate or value:\n  %s", sql)
	}
	for i, e := range siteQueryExceptions {
		if !used[i] {
			t.Errorf("exception %q (%s) matched no statement; remove it", e.match, e.why)
		}
	}
	if checked < 100 {
		t.Errorf("only %d statements on distributed tables recorded; the recorder lost them", checked)
	}
	t.Logf("%d statements on distributed tables, %d excused", checked, len(siteQueryExceptions))
}

// insertsWithSite reports whether sql inserts (one INSERT or several in a
// CTE) with site_id among the columns of every INSERT, and filters nothing
// without a site.
func insertsWithSite(sql string) bool {
	ins := insertInto.FindAllStringSubmatch(sql, -1)
	if len(ins) == 0 || hasWhere.MatchString(sql) {
		return false
	}
	for _, m := range ins {
		if !regexp.MustCompile(`\bsite_id\b`).MatchString(m[1]) {
			return false
		}
	}
	return true
}

// routesToSite reports whether sql touches a distributed table, and if so
// whether it names its site: a site_id predicate, or site_id among the
// columns of every INSERT of a statement without a WHERE.
func routesToSite(sql string) (onDistributed, routed bool) {
	for _, m := range tableRef.FindAllStringSubmatch(sql, -1) {
		if slices.Contains(distributedTables, strings.ToLower(m[1])) {
			onDistributed = true
		}
	}
	return onDistributed, sitePredicate.MatchString(sql) || insertsWithSite(sql)
}

// The classifier catches what it exists for.
func TestRoutesToSite(t *testing.T) {
	for _, c := range []struct {
		sql                 string
		distributed, routed bool
	}{
		{`SELECT * FROM "grants" WHERE "grants"."site_id" = $1 AND id = $2`, true, true},
		{`SELECT * FROM "grants" WHERE id = $1`, true, false},
		{`UPDATE "cimd_hosts" SET "reviewed"=$1 WHERE "id" = $2`, true, false},
		{`DELETE FROM "consents" WHERE "consents"."site_id" IN ($1,$2)`, true, true},
		{`INSERT INTO "courses" ("site_id","slug") VALUES ($1,$2)`, true, true},
		{`INSERT INTO "courses" ("slug") VALUES ($1)`, true, false},
		{"WITH g AS (INSERT INTO grants (id, site_id) VALUES ($1,$2) RETURNING id), t AS (INSERT INTO refresh_tokens (site_id, grant_id) SELECT $2, id FROM g RETURNING id) SELECT count(*) FROM t", true, true},
		{"WITH g AS (INSERT INTO grants (id, site_id) VALUES ($1,$2) RETURNING id) INSERT INTO audit_events (actor) SELECT $3 FROM g", true, false},
		{`SELECT * FROM "users" WHERE email = $1`, false, false},
		{`SELECT * FROM "sites" JOIN site_hosts ON site_hosts.site_id = sites.id WHERE site_hosts.host = $1`, false, false},
	} {
		d, r := routesToSite(c.sql)
		if d != c.distributed || (d && r != c.routed) {
			t.Errorf("routesToSite(%s) = %v, %v; want %v, %v", c.sql, d, r, c.distributed, c.routed)
		}
	}
}
