package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/vocab"
)

// Page sizes of the list tools (the storage default is 20 as well).
const (
	DefaultPageSize = 20
	MaxPageSize     = 50
)

// toolSpec is one tool: its name, the scopes a caller needs for it (all of
// them; none: public), and how to add it to a server.
type toolSpec struct {
	name   string
	scopes []string
	add    func(*gomcp.Server, *tools)
}

// The purchase kinds of my_purchases.
const (
	kindDigitalProducts    = "digital_products"
	kindConsultingServices = "consulting_services"
	kindEventRegistrations = "event_registrations"
)

// registry lists every tool, in the order they are documented. A tool's
// index is its bit in a toolMask. Tool names are decided in DESIGN §10.
// It is filled by init: the handlers it names refer back to it.
var registry []toolSpec

// registryIndex finds a tool by name.
var registryIndex map[string]int

func init() {
	registry = defineTools()
	registryIndex = make(map[string]int, len(registry))
	for i, t := range registry {
		if _, dup := registryIndex[t.name]; dup {
			panic("mcp: duplicate tool " + t.name)
		}
		registryIndex[t.name] = i
	}
	if len(registry) > 64 {
		panic("mcp: a toolMask holds at most 64 tools")
	}
	publicMask = maskFor(nil)
	anonymous = &caller{mask: publicMask}
}

func defineTools() []toolSpec {
	return []toolSpec{
		define(gomcp.Tool{
			Name:  "search_courses",
			Title: "Search the course catalog",
			Description: "Search this site's published courses. `query` is matched against titles, subtitles and descriptions " +
				"(case-insensitive; omit it to list every course) and `category` filters by category name. Returns up to `limit` " +
				"courses (default 20, at most 50) with prices and the total number of matches; when `next_cursor` is present, " +
				"call again with it as `cursor` for the next page. The answer also lists every category. Use get_course with a " +
				"slug for a course's description, lecturers and curriculum.",
		}, nil, func(p props) { p.text("query", 200); p.text("category", 120); p.page() }, (*tools).searchCourses),

		define(gomcp.Tool{
			Name:  "get_course",
			Title: "Get a course",
			Description: "Get one published course by its slug: title, description, price, lecturers and the curriculum outline " +
				"(sections with their published lectures, durations and which lectures are free previews). Slugs come from " +
				"search_courses. An unknown slug is an error.",
		}, nil, func(p props) { p.slug("slug") }, (*tools).getCourse),

		define(gomcp.Tool{
			Name:  "list_events",
			Title: "List upcoming events",
			Description: "List this site's upcoming public events (live Q&As, workshops, webinars), soonest first, with dates " +
				"(UTC), location, capacity and price. Paged like search_courses.",
		}, nil, func(p props) { p.page() }, (*tools).listEvents),

		define(gomcp.Tool{
			Name:  "get_pricing",
			Title: "What the site sells",
			Description: "Everything this site sells, with prices and currency: courses, membership plans, digital products, " +
				"consulting services and upcoming events. Each list holds at most 50 items; `truncated` says when the full " +
				"list at `pricing_url` is longer.",
		}, nil, nil, (*tools).getPricing),

		define(gomcp.Tool{
			Name:  "get_site_info",
			Title: "About this site",
			Description: "Describe this site: name, description, course categories, links for agents (llms.txt, the sign-in " +
				"walkthrough auth.md, pricing, OpenAPI, OAuth metadata) and what the caller may do here (signed in or not, " +
				"scopes in effect, usable tools). Call it first when unsure what the site offers or how to sign in.",
		}, nil, nil, (*tools).getSiteInfo),

		define(gomcp.Tool{
			Name:  "my_enrollments",
			Title: "My enrollments",
			Description: "List the signed-in member's course enrollments at this site: course, enrollment date, access expiry " +
				"(or lifetime access), whether access is still active, and the last watched lecture with its playback position. " +
				"Paged: `limit` (default 20, at most 50) and `cursor`. Needs scope account:read.",
		}, []string{scope.AccountRead}, func(p props) { p.page() }, (*tools).myEnrollments),

		define(gomcp.Tool{
			Name:  "my_course_progress",
			Title: "My progress in a course",
			Description: "The signed-in member's progress in one enrolled course: access dates, the number and length of " +
				"published lectures, how many of them the member completed (and the percentage), where to resume (the last " +
				"watched lecture, its section, position and whether it was completed) and the next lecture to take (the first " +
				"one in curriculum order not completed yet). Needs scope account:read.",
		}, []string{scope.AccountRead}, func(p props) { p.slug("course_slug") }, (*tools).myCourseProgress),

		define(gomcp.Tool{
			Name:  "my_purchases",
			Title: "My purchases",
			Description: "What the signed-in member bought at this site: digital products, consulting services (with sessions " +
				"used) and event registrations. Without `kind` it returns the first page of each; to page further pass `kind` " +
				"and that kind's `next_cursor` as `cursor`. Never shows order numbers, coupons, refunds or invoices. Needs scope account:read.",
		}, []string{scope.AccountRead}, func(p props) {
			p.enum("kind", kindDigitalProducts, kindConsultingServices, kindEventRegistrations)
			p.page()
		}, (*tools).myPurchases),

		define(gomcp.Tool{
			Name:  "my_notifications",
			Title: "My notifications",
			Description: "The signed-in member's notifications at this site, newest first, with the number of unread ones. " +
				"`unread_only` lists unread ones only. Paged: `limit` and `cursor`. Needs scope account:read.",
		}, []string{scope.AccountRead}, func(p props) { p.page() }, (*tools).myNotifications),

		define(gomcp.Tool{
			Name:        "mark_notification_read",
			Title:       "Mark a notification read",
			Description: "Mark one of the signed-in member's notifications as read, by the id my_notifications gives, and return it with the number still unread. Marking a read notification again changes nothing. Needs scopes account:read and account:write (the answer shows the notification).",
			Annotations: &gomcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: new(false), OpenWorldHint: new(false)},
		}, []string{scope.AccountRead, scope.AccountWrite}, func(p props) { p.id("id") }, (*tools).markNotificationRead),

		define(gomcp.Tool{
			Name:  "list_courses",
			Title: "List all courses (operators)",
			Description: "For the site's operators: every course of the site, drafts included unless `include_drafts` is false, " +
				"with status, price and dates. Paged: `limit` and `cursor`. Needs scope courses:read.",
		}, []string{"courses:read"}, func(p props) { p.defaultValue("include_drafts", true); p.page() }, (*tools).listCourses),

		define(gomcp.Tool{
			Name:  "list_students",
			Title: "List students (operators)",
			Description: "For the site's operators: the site's students with e-mail, name, number of enrollments and when they " +
				"joined, ordered by e-mail. `search` matches part of an e-mail address or name. Paged: `limit` and `cursor`. " +
				"Needs scope students:read.",
		}, []string{"students:read"}, func(p props) { p.text("search", 200); p.page() }, (*tools).listStudents),

		define(gomcp.Tool{
			Name:  "recent_orders",
			Title: "Recent orders (operators)",
			Description: "For the site's operators: the most recent orders, newest first, with customer e-mail, items, totals, " +
				"coupon and refund status. Paged: `limit` and `cursor`. Needs scope orders:read.",
		}, []string{"orders:read"}, func(p props) { p.page() }, (*tools).recentOrders),

		define(gomcp.Tool{
			Name:  "sales_summary",
			Title: "Sales summary (operators)",
			Description: "For the site's operators: orders, paid revenue, refunded orders and new enrollments over the last " +
				"`days` days (default 30, at most 366). Needs scope analytics:read.",
		}, []string{"analytics:read"}, func(p props) { p.bounds("days", 1, 366, 30) }, (*tools).salesSummary),
	}
}

// ToolAccess lists every tool and the scopes it needs, in documentation
// order, for /auth.md.
func ToolAccess() []vocab.MCPTool {
	out := make([]vocab.MCPTool, len(registry))
	for i, t := range registry {
		out[i] = vocab.MCPTool{Name: t.name, Scopes: append([]string(nil), t.scopes...)}
	}
	return out
}

// define builds a tool's schemas once: inferred from In and Out, then In's
// bounded by bound. Fixed schema pointers let the SDK's SchemaCache resolve
// them once per process, however many servers are built.
func define[In, Out any](t gomcp.Tool, scopes []string, bound func(props),
	h func(*tools, context.Context, *gomcp.CallToolRequest, In) (*gomcp.CallToolResult, Out, error)) toolSpec {
	in, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: %s input schema: %v", t.Name, err))
	}
	if bound != nil {
		bound(props(in.Properties))
	}
	out, err := jsonschema.For[Out](nil)
	if err != nil {
		panic(fmt.Sprintf("mcp: %s output schema: %v", t.Name, err))
	}
	arraysNotNull(out)
	t.InputSchema, t.OutputSchema = in, out
	if t.Annotations == nil {
		// Every tool but mark_notification_read only reads, and none
		// reaches beyond this site.
		t.Annotations = &gomcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}
	}
	t.Annotations.Title = t.Title
	tool := &t
	return toolSpec{name: t.Name, scopes: scopes, add: func(s *gomcp.Server, ts *tools) {
		gomcp.AddTool(s, tool, func(ctx context.Context, req *gomcp.CallToolRequest, in In) (*gomcp.CallToolResult, Out, error) {
			return h(ts, ctx, req, in)
		})
	}}
}

// arraysNotNull makes the inferred ["null", "array"] of Go slices plain
// "array": the handlers never answer null for a list, and a model should
// not have to consider it.
func arraysNotNull(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" && s.Types[1] == "array" {
		s.Type, s.Types = "array", nil
	}
	for _, p := range s.Properties {
		arraysNotNull(p)
	}
	arraysNotNull(s.Items)
}

// props bounds the properties of an input schema: models read the bounds,
// and the SDK enforces them before a handler runs.
type props map[string]*jsonschema.Schema

func (p props) get(name string) *jsonschema.Schema {
	s, ok := p[name]
	if !ok {
		panic("mcp: no input property " + name)
	}
	return s
}

func (p props) text(name string, maxLen int) {
	p.get(name).MaxLength = &maxLen
}

func (p props) slug(name string) {
	s := p.get(name)
	one, most := 1, 120
	s.MinLength, s.MaxLength = &one, &most
	s.Pattern = "^[a-z0-9-]+$"
}

func (p props) enum(name string, values ...string) {
	s := p.get(name)
	for _, v := range values {
		s.Enum = append(s.Enum, v)
	}
}

// id bounds a numeric ID to 1 .. 2^53-1, the integers a JSON number holds
// exactly: a larger one is refused by the schema, in its words, before it
// could overflow the decoder.
func (p props) id(name string) {
	lo, hi := 1.0, float64(1<<53-1)
	s := p.get(name)
	s.Minimum, s.Maximum = &lo, &hi
}

func (p props) bounds(name string, lo, hi float64, def int) {
	s := p.get(name)
	s.Minimum, s.Maximum = &lo, &hi
	s.Default = json.RawMessage(fmt.Sprint(def))
}

func (p props) defaultValue(name string, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	p.get(name).Default = b
}

func (p props) page() {
	p.bounds("limit", 1, MaxPageSize, DefaultPageSize)
	p.text("cursor", 40)
}
