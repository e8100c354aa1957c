package memberapi

import (
	"strings"
	"testing"

	graphql "github.com/graph-gophers/graphql-go"
)

// The reader finds the operation and its type as graphql-go would run it.
func TestMemberQueryReaderOperations(t *testing.T) {
	tests := []struct {
		doc, opName, typ string
		roots            int
	}{
		{`{ viewer { id } }`, "", opQuery, 1},
		{`query { viewer { id } unreadNotificationCount }`, "", opQuery, 2},
		{`query Named($a: Int = 3, $b: [String!]! = ["x"]) @dir(x: 1) { viewer { id } }`, "", opQuery, 1},
		{`mutation { markAllNotificationsRead }`, "", opMutation, 1},
		{`mutation M($id: ID!) { a: markNotificationRead(id: $id) { id } b: markAllNotificationsRead }`, "M", opMutation, 2},
		{`query A { viewer { id } } mutation B { markAllNotificationsRead }`, "B", opMutation, 1},
		{`query A { viewer { id } } mutation B { markAllNotificationsRead }`, "A", opQuery, 1},
		{"\uFEFF# comment\n{ viewer, { id, name } }", "", opQuery, 1},
		{`query { ...F } fragment F on Query { viewer { id } ... on Query { unreadNotificationCount } ... @include(if: true) { notifications { totalCount } } }`, "", opQuery, 3},
		{`"""A description""" query D { viewer { id } }`, "", opQuery, 1},
		{`{ notifications(first: 1, after: "a \"quoted\" \\ \u00e9 cursor", unreadOnly: true) { totalCount } }`, "", opQuery, 1},
		{"{ notifications(after: \"\"\"block \" and \"\" string\n\"\"\") { totalCount } }", "", opQuery, 1},
		{`{ x(a: -1, b: 1.5e3, c: 0, d: -0.0, e: [1, [2]], f: {g: {h: null}}, i: ENUM) }`, "", opQuery, 1},
		{`subscription { viewer { id } }`, "", opSubscription, 1},
	}
	for _, tc := range tests {
		doc, err := parseDocument(tc.doc)
		if err != nil {
			t.Fatalf("%s: %v", tc.doc, err)
		}
		op, err := doc.operation(tc.opName)
		if err != nil {
			t.Fatalf("%s: %v", tc.doc, err)
		}
		w := &costWalker{doc: doc, op: op, maxSels: 1000}
		if err := w.countRoot(op.sels); err != nil {
			t.Fatal(err)
		}
		if op.typ != tc.typ || w.c.rootFields != tc.roots {
			t.Errorf("%s: %s with %d root fields; want %s with %d", tc.doc, op.typ, w.c.rootFields, tc.typ, tc.roots)
		}
	}
}

func TestMemberQueryReaderRefusesMalformedDocuments(t *testing.T) {
	for _, doc := range []string{
		``, `   `, `# only a comment`, `{`, `{ }`, `{ viewer { id }`, `query`, `mutation M`, `fragment F on Query { id }`,
		`{ a(b: ) }`, `{ a(b: $) }`, `{ a(b: 01) }`, `{ a(b: 1.) }`, `{ a(b: 1e) }`, `{ a(b: "unterminated) }`,
		"{ a(b: \"line\nbreak\") }", `{ a(b: """unterminated) }`, `{ a(b: 1x) }`, `{ a(b: .5) }`,
		`query($a: Int = $b) { a }`, `{ a } fragment on on Query { a }`, `{ ...F } fragment F on Query { a } fragment F on Query { b }`,
		`{ a } type Query { a: Int }`, `{ a ~ }`, `{ a(b: [1, 2) }`, `{ a(b: {c 1}) }`,
		`{ ` + nest("a", maxNesting+1, "b") + ` }`,
		// Valid GraphQL, but graphql-go ends a block string at an escaped
		// triple quote (see lexer.string).
		"{ notifications(after: \"\"\"block \\\"\"\" string\n\"\"\") { totalCount } }",
	} {
		if _, err := parseDocument(doc); err == nil {
			t.Errorf("%q parsed", doc)
		}
	}
	doc, _ := parseDocument(`query A { a } query B { b }`)
	if _, err := doc.operation(""); err == nil {
		t.Error("two operations and no operationName: an operation was chosen")
	}
	if _, err := doc.operation("C"); err == nil {
		t.Error("operationName C chose an operation")
	}
}

// FuzzMemberQueryReader: the reader never panics, and every document
// graphql-go accepts for the member schema, the reader reads too (else the
// handler would refuse a valid query).
func FuzzMemberQueryReader(f *testing.F) {
	for _, seed := range []string{
		viewerQuery, introspectionQuery, fanOut(3),
		`query Q($n: Int = 5, $a: String) { viewer { enrolledCourses(first: $n, after: $a) { nodes { slug lastWatchedLecture { lectureId } } pageInfo { endCursor } } } }`,
		`mutation { markNotificationRead(id: "1") { id readAt } markAllNotificationsRead updateNotificationSubscription(topic: "announcements", channel: "email", enabled: false) { enabled } }`,
		`{ notifications(first: 2, unreadOnly: true, after: """x""") { totalCount } __typename }`,
		`query { ...F } fragment F on Query { viewer { ... on Viewer { id } } }`,
		"{ viewer { id } } # trailing comment",
	} {
		f.Add(seed)
	}
	s, err := graphql.ParseSchema(schemaSDL, nil, graphql.UseStringDescriptions())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, q string) {
		if len(q) > 4096 {
			return
		}
		doc, err := parseDocument(q)
		if err != nil && strings.Contains(err.Error(), "escaped triple quote") {
			return // refused on purpose: graphql-go reads it differently
		}
		if errs := s.Validate(q); len(errs) == 0 && err != nil {
			t.Fatalf("graphql-go accepts %q; the reader says %v", q, err)
		}
		if err == nil && len(doc.operations) == 0 {
			t.Fatalf("%q: a document without operations", q)
		}
	})
}
