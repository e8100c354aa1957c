package memberapi

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	graphql "github.com/graph-gophers/graphql-go"
	"github.com/graph-gophers/graphql-go/ast"
)

// introspectionQuery is graphql-js's getIntrospectionQuery() (v16, with
// descriptions), which GraphiQL, codegen tools and MCP bridges send.
const introspectionQuery = `
query IntrospectionQuery {
  __schema {
    queryType { name }
    mutationType { name }
    subscriptionType { name }
    types { ...FullType }
    directives { name description locations args { ...InputValue } }
  }
}
fragment FullType on __Type {
  kind name description
  fields(includeDeprecated: true) {
    name description
    args { ...InputValue }
    type { ...TypeRef }
    isDeprecated deprecationReason
  }
  inputFields { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
  possibleTypes { ...TypeRef }
}
fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
fragment TypeRef on __Type {
  kind name
  ofType { kind name ofType { kind name ofType { kind name ofType { kind name
    ofType { kind name ofType { kind name ofType { kind name } } } } } } }
}`

func nest(field string, n int, leaf string) string {
	return strings.Repeat(field+" { ", n) + leaf + strings.Repeat(" }", n)
}

// Each limit refuses what exceeds it with 400 QUERY_TOO_COMPLEX (or
// QUERY_TOO_LARGE), before anything runs.
func TestMemberAPILimits(t *testing.T) {
	aliases := func(n int, field string) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "a%d: %s ", i, field)
		}
		return b.String()
	}
	tests := []struct {
		name, query string
		vars        map[string]any
		code        string
		message     string
	}{
		{"depth", `{ __schema { types { ` + nest("ofType", 14, "name") + ` } } }`, nil, CodeQueryTooComplex, "exceeds max depth 15"},
		{"oversized query", `{ viewer { id } }` + strings.Repeat(" ", 16<<10), nil, CodeQueryTooLarge, "at most 16384"},
		{"root fields", `{ ` + aliases(11, "unreadNotificationCount") + ` }`, nil, CodeQueryTooComplex, "11 fields at its root"},
		{"root fields through fragments", `query { ...F ...F } fragment F on Query { ` + aliases(6, "unreadNotificationCount") + ` }`, nil, CodeQueryTooComplex, "12 fields at its root"},
		{"connections", `{ viewer { ` + aliases(11, "digitalProducts(first: 1) { totalCount }") + ` } }`, nil, CodeQueryTooComplex, "11 connections"},
		{"connections across viewers", `{ ` + aliases(6, "viewer { digitalProducts(first: 1) { totalCount } enrolledCourses(first: 1) { totalCount } }") + ` }`, nil, CodeQueryTooComplex, "12 connections"},
		{"nodes", `{ viewer { ` + aliases(7, "enrolledCourses(first: 100) { totalCount }") + ` } }`, nil, CodeQueryTooComplex, "700 connection nodes"},
		{"nodes from variables", `query($n: Int) { viewer { ` + aliases(7, "enrolledCourses(first: $n) { totalCount }") + ` } }`, map[string]any{"n": 100}, CodeQueryTooComplex, "700 connection nodes"},
		{"nodes from defaults", `query($n: Int = 90) { viewer { ` + aliases(7, "enrolledCourses(first: $n) { totalCount }") + ` } }`, nil, CodeQueryTooComplex, "630 connection nodes"},
		{"nodes, default page size", `{ viewer { enrolledCourses { totalCount } } notifications(first: 100) { totalCount } ` + `b: notifications(first: 100) { totalCount } c: notifications(first: 100) { totalCount } d: notifications(first: 100) { totalCount } e: notifications(first: 100) { totalCount } f: notifications(first: 100) { totalCount } }`, nil, CodeQueryTooComplex, "620 connection nodes"},
		{"selections", `{ viewer { ` + aliases(1001, "id") + ` } }`, nil, CodeQueryTooComplex, "1000 field selections"},
		{"overlapping selections", `{ viewer { ` + strings.Repeat("id ", 1001) + ` } }`, nil, CodeQueryTooComplex, "Overlapping field validation aborted"},
		{"fragment fan-out", fanOut(40), nil, CodeQueryTooComplex, "1000 field selections"},
		{"fragment fan-out under __schema", introspectionFanOut(10), nil, CodeQueryTooComplex, "1000 field selections"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := seededFake()
			api := newTestAPI(t, store, nil)
			r := api.post(readWrite, tc.query, tc.vars)
			if r.status != 400 || len(r.Errors) == 0 || r.codes()[0] != tc.code || r.Data != nil {
				t.Fatalf("want 400 %s without data; got %d %s", tc.code, r.status, r.raw)
			}
			if !strings.Contains(r.Errors[0].Message, tc.message) {
				t.Errorf("message %q does not say %q", r.Errors[0].Message, tc.message)
			}
			for name, n := range store.calls {
				if n > 0 {
					t.Errorf("a refused query called %s", name)
				}
			}
		})
	}
}

// introspectionFanOut is fanOut under __schema: 2^(levels+1) selections of
// __Type fields.
func introspectionFanOut(levels int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{ __schema { types { ...T%d } } }\n", levels)
	b.WriteString("fragment T0 on __Type { name kind }\n")
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "fragment T%d on __Type { ...T%d ...T%d }\n", i, i-1, i-1)
	}
	return b.String()
}

// fanOut is a document whose fragments double at every level: 2^levels
// viewer selections from a few hundred bytes.
func fanOut(levels int) string {
	var b strings.Builder
	b.WriteString("query { ...F0 }\n")
	for i := range levels {
		fmt.Fprintf(&b, "fragment F%d on Query { ...F%d ...F%d }\n", i, i+1, i+1)
	}
	fmt.Fprintf(&b, "fragment F%d on Query { viewer { id } }\n", levels)
	return b.String()
}

// What the limits allow: a full dashboard (every connection at its
// largest page) and the standard introspection query.
func TestMemberAPILimitsAllowRealQueries(t *testing.T) {
	api := newTestAPI(t, seededFake(), nil)
	for name, q := range map[string]string{
		"dashboard": `{
			viewer { id name email schools { name roles }
				enrolledCourses(first: 100) { totalCount pageInfo { hasNextPage endCursor } nodes { slug expireDate hasLifetimeAccess lastWatchedLecture { lectureId positionSeconds } } }
				digitalProducts(first: 100) { nodes { slug } }
				consultingServices(first: 100) { nodes { slug sessionsIncluded sessionsUsed } }
				eventRegistrations(first: 100) { nodes { eventSlug startsAt } } }
			notifications(first: 100) { totalCount nodes { id title readAt } }
			unreadNotificationCount
			notificationSubscriptions(first: 100) { totalCount nodes { topic channel enabled } } }`,
		"introspection": introspectionQuery,
	} {
		r := api.post(readOnly, q, nil)
		if r.status != 200 || len(r.Errors) != 0 {
			t.Fatalf("%s: %d %s", name, r.status, r.raw)
		}
	}
}

// The member schema states what the member bought and nothing more: no
// type, field or argument of it names an order, coupon, refund or invoice
// (spec: purchase connections). Checked on the schema as parsed; integration/
// checks the same through introspection over HTTP.
func TestMemberSchemaHasNoOrderCouponRefundOrInvoice(t *testing.T) {
	h, err := New(Options{Store: newFakeStore(), Verifier: fakeAuth{}})
	if err != nil {
		t.Fatal(err)
	}
	forbidden := regexp.MustCompile(`(?i)order|coupon|refund|invoice|receipt|payment|price|amount|total(cents|price)`)
	names := 0
	check := func(where, name string) {
		names++
		if forbidden.MatchString(name) {
			t.Errorf("%s %q", where, name)
		}
	}
	for name, typ := range h.schema.AST().Types {
		check("type", name)
		switch typ := typ.(type) {
		case *ast.ObjectTypeDefinition:
			for _, f := range typ.Fields {
				check("field "+name+".", f.Name)
				for _, a := range f.Arguments {
					check("argument of "+name+"."+f.Name, a.Name.Name)
				}
			}
		case *ast.InputObject:
			for _, f := range typ.Values {
				check("input field of "+name, f.Name.Name)
			}
		}
	}
	if names < 60 {
		t.Fatalf("only %d names checked; is the schema there?", names)
	}
}

// Connection sizes multiply through nested connections: checked on a
// schema with a connection inside a connection's nodes, which the member
// schema does not have (yet).
func TestMemberAPICostMultipliesNestedConnections(t *testing.T) {
	s, err := graphql.ParseSchema(`
		type Query { courses(first: Int): CourseConnection! }
		type CourseConnection { nodes: [Course!]! totalCount: Int! }
		type Course { id: ID! lectures(first: Int): LectureConnection! }
		type LectureConnection { nodes: [Lecture!]! }
		type Lecture { id: ID! notes(first: Int): NoteConnection! }
		type NoteConnection { totalCount: Int! }`, nil)
	if err != nil {
		t.Fatal(err)
	}
	info := newSchemaInfo(s.AST())
	tests := []struct {
		query              string
		vars               map[string]any
		connections, nodes int64
	}{
		{`{ courses(first: 10) { totalCount } }`, nil, 1, 10},
		{`{ courses { totalCount } }`, nil, 1, 20},
		{`{ courses(first: 10) { nodes { lectures(first: 5) { nodes { id } } } } }`, nil, 11, 10 + 50},
		{`{ courses(first: 10) { nodes { lectures(first: 5) { nodes { notes(first: 3) { totalCount } } } } } }`, nil, 1 + 10 + 50, 10 + 50 + 150},
		{`query($a: Int, $b: Int = 4) { courses(first: $a) { nodes { ...L } } } fragment L on Course { lectures(first: $b) { nodes { id } } }`, map[string]any{"a": 7}, 8, 7 + 28},
		{`{ a: courses(first: 100) { nodes { lectures(first: 100) { nodes { notes(first: 100) { totalCount } } } } } }`, nil, 1 + 100 + 10000, 100 + 10000 + 1000000},
		{`{ courses(first: 1000) { totalCount } }`, nil, 1, 100}, // counted at the maximum; the resolver refuses it
	}
	for _, tc := range tests {
		doc, err := parseDocument(tc.query)
		if err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		op, _ := doc.operation("")
		w := &costWalker{info: info, doc: doc, op: op, vars: tc.vars, maxSels: 1000}
		if err := w.walk(op.sels, "Query", 1); err != nil {
			t.Fatal(err)
		}
		if w.c.connections != tc.connections || w.c.nodes != tc.nodes {
			t.Errorf("%s: %d connections, %d nodes; want %d, %d", tc.query, w.c.connections, w.c.nodes, tc.connections, tc.nodes)
		}
	}
}

// Limits can be set per deployment; zero fields keep the defaults.
func TestMemberAPILimitsAreConfigurable(t *testing.T) {
	api := newTestAPI(t, seededFake(), &Limits{MaxNodes: 40})
	r := api.post(readOnly, `{ viewer { enrolledCourses(first: 41) { totalCount } } }`, nil)
	if r.status != 400 || r.codes()[0] != CodeQueryTooComplex {
		t.Fatalf("MaxNodes 40: %d %s", r.status, r.raw)
	}
	r = api.post(readOnly, `{ viewer { enrolledCourses { totalCount } a: enrolledCourses { totalCount } } }`, nil)
	if r.status != 200 {
		t.Fatalf("two default pages under MaxNodes 40: %d %s", r.status, r.raw)
	}
	if got := (&Limits{MaxNodes: 40}).withDefaults(); got.MaxDepth != DefaultLimits().MaxDepth || got.MaxNodes != 40 {
		t.Fatalf("withDefaults: %+v", got)
	}
}
