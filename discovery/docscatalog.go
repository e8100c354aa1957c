package discovery

import (
	"strconv"
	"strings"
	"time"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/vocab"
)

// Bounds of the catalog documents: a site with a huge catalog still gets a
// document an agent can read. llms.txt links at most maxLLMSCourses courses
// (then points to /pricing.md); /pricing.md lists at most maxPricingRows
// items per section.
const (
	maxLLMSCourses = 200
	maxPricingRows = 500
)

// llmsText renders /llms.txt in the llmstxt.org format: an H1 with the
// site's name, a blockquote summary, then H2 sections of link lists. Every
// link resolves at this origin.
func llmsText(site *tenant.Site, o *storage.Offerings) []byte {
	var b doc
	name := mdText(site.Name)
	b.line("# ", name)
	b.line()
	summary := strings.TrimSpace(site.Description)
	if summary == "" {
		summary = site.Name + " is a course site."
	}
	b.line("> ", mdText(summary), " ", plural(len(o.Courses), "published course", "published courses"), " at ", site.Origin, ".")
	b.line()
	b.line("Generated from the site's published catalog; drafts never appear. ",
		"The MCP server at ", site.URL(vocab.MCPPath), " answers catalog questions without signing in; ",
		"a member's own enrollments, purchases and notifications need an access token with scope `", scope.AccountRead, "`; ",
		"how to get one: ", site.URL(vocab.AuthMDPath), ".")
	b.line()

	b.line("## Courses")
	b.line()
	if len(o.Courses) == 0 {
		b.line("- [Pricing](", site.URL(vocab.PricingMDPath), "): no courses are published yet")
	}
	for i, c := range o.Courses {
		if i == maxLLMSCourses {
			b.line("- [All ", strconv.Itoa(len(o.Courses)), " courses with prices](", site.URL(vocab.PricingMDPath), "): the list above shows the first ", strconv.Itoa(maxLLMSCourses))
			break
		}
		desc := mdText(c.Subtitle)
		if desc != "" {
			desc += ". "
		}
		if c.Category != "" {
			desc += mdText(c.Category) + ", "
		}
		desc += vocab.Price(c.PriceCents, c.Currency)
		b.line("- [", mdText(c.Title), "](", site.URL(vocab.CourseMDPath(c.Slug)), "): ", desc)
	}
	b.line()

	b.line("## Pricing")
	b.line()
	b.line("- [Pricing](", site.URL(vocab.PricingMDPath), "): courses, membership plans, digital products, consulting services and upcoming events, with prices and currency")
	b.line()

	b.line("## Agents and APIs")
	b.line()
	b.line("- [Authentication walkthrough](", site.URL(vocab.AuthMDPath), "): OAuth 2.0 Authorization Code with PKCE, step by step, with this site's URLs")
	b.line("- [MCP server](", site.URL(vocab.MCPPath), "): Streamable HTTP; public catalog tools without a token, member tools with `", scope.AccountRead, "`, operator tools with operator scopes")
	b.line("- [OpenAPI document](", site.URL(vocab.OpenAPIPath), "): the administrative REST API for operators")
	b.line()

	b.line("## Optional")
	b.line()
	b.line("- [Protected-resource metadata](", site.URL(vocab.ProtectedResourcePath), "): RFC 9728")
	b.line("- [Authorization-server metadata](", site.URL(vocab.AuthorizationServerPath), "): RFC 8414, the source of truth for endpoints and scopes")
	return b.Bytes()
}

// pricingMarkdown renders /pricing.md from the published offerings.
func pricingMarkdown(site *tenant.Site, o *storage.Offerings) []byte {
	var b doc
	name := mdText(site.Name)
	b.line("# ", name, ": pricing")
	b.line()
	b.line("What ", name, " (", site.Origin, ") sells, from its published catalog. ", currencyNote(o))
	b.line()

	pricingSection(&b, "Courses", "No courses are published at the moment.", []string{"Course", "Category", "Price"}, o.Courses,
		func(c *storage.Course) []string {
			return []string{"[" + mdText(c.Title) + "](" + site.URL(vocab.CourseMDPath(c.Slug)) + ")", mdText(c.Category), vocab.Price(c.PriceCents, c.Currency)}
		})
	pricingSection(&b, "Membership plans", "No membership plans at the moment.", []string{"Plan", "Price", "Billed", "What it includes"}, o.MembershipPlans,
		func(p *storage.MembershipPlan) []string {
			return []string{mdText(p.Title), vocab.Price(p.PriceCents, p.Currency), billing(p.Interval), mdText(p.Description)}
		})
	pricingSection(&b, "Digital products", "No digital products at the moment.", []string{"Product", "Price", "Description"}, o.DigitalProducts,
		func(p *storage.DigitalProduct) []string {
			return []string{mdText(p.Title), vocab.Price(p.PriceCents, p.Currency), mdText(p.Description)}
		})
	pricingSection(&b, "Consulting services", "No consulting services at the moment.", []string{"Service", "Sessions", "Price", "Description"}, o.ConsultingServices,
		func(s *storage.ConsultingService) []string {
			return []string{mdText(s.Title), strconv.Itoa(s.Sessions), vocab.Price(s.PriceCents, s.Currency), mdText(s.Description)}
		})
	pricingSection(&b, "Upcoming events", "No public events are scheduled.", []string{"Event", "Starts (UTC)", "Ends (UTC)", "Location", "Price"}, o.Events,
		func(e *storage.Event) []string {
			return []string{mdText(e.Title), e.StartsAt.UTC().Format(time.DateTime[:16]), e.EndsAt.UTC().Format(time.DateTime[:16]),
				mdText(e.Location), vocab.Price(e.PriceCents, e.Currency)}
		})
	b.line("See also: [llms.txt](", site.URL(vocab.LLMSTxtPath), ") for the site index, and the MCP tool `get_pricing` at ", site.URL(vocab.MCPPath), ".")
	return b.Bytes()
}

// courseMarkdown renders /courses/<slug>.md: what the course is, who
// teaches it and its outline (published lectures only).
func courseMarkdown(site *tenant.Site, c *storage.CourseDetail) []byte {
	var b doc
	b.line("# ", mdText(c.Title))
	b.line()
	if c.Subtitle != "" {
		b.line("> ", mdText(c.Subtitle))
		b.line()
	}
	b.line("- Site: ", mdText(site.Name), " (", site.Origin, ")")
	if c.Category != "" {
		b.line("- Category: ", mdText(c.Category))
	}
	b.line("- Price: ", vocab.Price(c.PriceCents, c.Currency))
	if len(c.Lecturers) > 0 {
		names := make([]string, len(c.Lecturers))
		for i, l := range c.Lecturers {
			names[i] = mdText(l.Name)
		}
		b.line("- Taught by: ", strings.Join(names, ", "))
	}
	lectures, seconds := 0, 0
	for _, s := range c.Sections {
		for _, l := range s.Lectures {
			lectures++
			seconds += l.DurationSeconds
		}
	}
	b.line("- Curriculum: ", plural(lectures, "lecture", "lectures"), ", ", minutes(seconds), " in total")
	b.line()
	if c.Description != "" {
		b.line(mdParagraph(c.Description))
		b.line()
	}

	if len(c.Lecturers) > 0 {
		b.line("## Lecturers")
		b.line()
		for _, l := range c.Lecturers {
			if l.Bio != "" {
				b.line("- **", mdText(l.Name), "**: ", mdText(l.Bio))
			} else {
				b.line("- **", mdText(l.Name), "**")
			}
		}
		b.line()
	}

	b.line("## Curriculum")
	b.line()
	b.line("Lectures marked *free preview* can be watched without buying the course.")
	b.line()
	for i, s := range c.Sections {
		b.line("### ", strconv.Itoa(i+1), ". ", mdText(s.Title))
		b.line()
		if len(s.Lectures) == 0 {
			b.line("No lectures published yet.")
			b.line()
			continue
		}
		for j, l := range s.Lectures {
			extra := ""
			if l.FreePreview {
				extra = " (*free preview*)"
			}
			b.line(strconv.Itoa(j+1), ". ", mdText(l.Title), ", ", minutes(l.DurationSeconds), extra)
		}
		b.line()
	}

	b.line("## More")
	b.line()
	b.line("- [All prices](", site.URL(vocab.PricingMDPath), ")")
	b.line("- [Site index for agents](", site.URL(vocab.LLMSTxtPath), ")")
	b.line("- MCP: call `get_course` with slug `", c.Slug, "` at ", site.URL(vocab.MCPPath))
	return b.Bytes()
}

// currencyNote says which currency the prices are in.
func currencyNote(o *storage.Offerings) string {
	if cur := o.Currencies(); len(cur) == 1 {
		return "All prices are in " + cur[0] + "."
	}
	return "Each price names its currency."
}

func billing(interval string) string {
	switch strings.ToLower(interval) {
	case "":
		return "once"
	case "day", "week", "month", "year":
		return "per " + strings.ToLower(interval)
	}
	return "every " + mdText(interval)
}

// pricingSection writes a section of /pricing.md: its heading, then a
// table of at most maxPricingRows items (saying so when there are more),
// or none when there are no items.
func pricingSection[T any](b *doc, title, none string, header []string, items []T, row func(*T) []string) {
	b.line("## ", title)
	b.line()
	if len(items) == 0 {
		b.line(none)
	} else {
		tableOf(b, header, items[:min(len(items), maxPricingRows)], row)
		if len(items) > maxPricingRows {
			b.line()
			b.line("The table shows the first ", strconv.Itoa(maxPricingRows), " of ", strconv.Itoa(len(items)), ".")
		}
	}
	b.line()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
