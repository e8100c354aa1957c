package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/vocab"
)

// The public catalog tools. Everything they read comes from
// storage.CatalogStore, which returns published items only: drafts and
// non-public events cannot reach an answer.

func (t *tools) searchCourses(ctx context.Context, _ *gomcp.CallToolRequest, in SearchCoursesInput) (*gomcp.CallToolResult, SearchCoursesOutput, error) {
	var out SearchCoursesOutput
	site, err := t.site(ctx)
	if err != nil {
		return nil, out, err
	}
	p, err := pageOf(ctx, t, "search_courses", in.PageInput, func(c *storage.Course) int64 { return c.ID },
		func(pg storage.Page) ([]storage.Course, int, error) {
			return t.store.SearchCourses(ctx, site.ID, storage.CourseQuery{Text: in.Query, Category: in.Category, Page: pg})
		},
		func(c *storage.Course) CourseSummary { return courseSummary(site, c) })
	if err != nil {
		return nil, out, err
	}
	cats, err := t.store.Categories(ctx, site.ID)
	if err != nil {
		return nil, out, t.fail(ctx, "search_courses", err)
	}
	return nil, SearchCoursesOutput{Courses: p.items, Total: p.total, NextCursor: p.next, Categories: nonNil(cats)}, nil
}

func (t *tools) getCourse(ctx context.Context, _ *gomcp.CallToolRequest, in GetCourseInput) (*gomcp.CallToolResult, CourseOutput, error) {
	var out CourseOutput
	site, err := t.site(ctx)
	if err != nil {
		return nil, out, err
	}
	d, err := t.store.CourseBySlug(ctx, site.ID, in.Slug)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, out, fmt.Errorf("no published course has the slug %q; search_courses lists the slugs", in.Slug)
	}
	if err != nil {
		return nil, out, t.fail(ctx, "get_course", err)
	}
	out.CourseSummary = courseSummary(site, &d.Course)
	out.Description = d.Description
	out.Lecturers = make([]LecturerOutput, len(d.Lecturers))
	for i, l := range d.Lecturers {
		out.Lecturers[i] = LecturerOutput{Name: l.Name, Bio: l.Bio}
	}
	out.Sections = make([]SectionOutput, len(d.Sections))
	for i, s := range d.Sections {
		sec := SectionOutput{Title: s.Title, Lectures: make([]LectureOutput, len(s.Lectures))}
		for j, l := range s.Lectures {
			sec.Lectures[j] = LectureOutput{Title: l.Title, DurationSeconds: l.DurationSeconds, FreePreview: l.FreePreview}
			out.LectureCount++
			out.TotalDurationSeconds += l.DurationSeconds
		}
		out.Sections[i] = sec
	}
	return nil, out, nil
}

func (t *tools) listEvents(ctx context.Context, _ *gomcp.CallToolRequest, in ListEventsInput) (*gomcp.CallToolResult, ListEventsOutput, error) {
	var out ListEventsOutput
	site, err := t.site(ctx)
	if err != nil {
		return nil, out, err
	}
	p, err := pageOf(ctx, t, "list_events", in.PageInput, func(e *storage.Event) int64 { return e.ID },
		func(pg storage.Page) ([]storage.Event, int, error) {
			rows, total, err := t.store.ListUpcomingEvents(ctx, site.ID, t.now(), pg)
			if errors.Is(err, storage.ErrNotFound) {
				// The cursor's event is gone.
				err = errBadCursor
			}
			return rows, total, err
		},
		eventOutput)
	return nil, ListEventsOutput{Events: p.items, NextCursor: p.next, Total: p.total}, err
}

func (t *tools) getPricing(ctx context.Context, _ *gomcp.CallToolRequest, _ NoInput) (*gomcp.CallToolResult, PricingOutput, error) {
	var out PricingOutput
	site, err := t.site(ctx)
	if err != nil {
		return nil, out, err
	}
	o, err := t.store.Offerings(ctx, site.ID, t.now())
	if err != nil {
		return nil, out, t.fail(ctx, "get_pricing", err)
	}
	out.PricingURL = site.URL(vocab.PricingMDPath)
	out.Courses = capped(o.Courses, &out.Truncated, func(c *storage.Course) CourseSummary { return courseSummary(site, c) })
	out.MembershipPlans = capped(o.MembershipPlans, &out.Truncated, func(p *storage.MembershipPlan) PlanOutput {
		return PlanOutput{Slug: p.Slug, Title: p.Title, Description: p.Description, Interval: p.Interval, Money: price(p.PriceCents, p.Currency)}
	})
	out.DigitalProducts = capped(o.DigitalProducts, &out.Truncated, func(p *storage.DigitalProduct) ProductOutput {
		return ProductOutput{Slug: p.Slug, Title: p.Title, Description: p.Description, Money: price(p.PriceCents, p.Currency)}
	})
	out.ConsultingServices = capped(o.ConsultingServices, &out.Truncated, func(s *storage.ConsultingService) ConsultingOutput {
		return ConsultingOutput{Slug: s.Slug, Title: s.Title, Description: s.Description, Sessions: s.Sessions, Money: price(s.PriceCents, s.Currency)}
	})
	out.Events = capped(o.Events, &out.Truncated, eventOutput)
	return nil, out, nil
}

func (t *tools) getSiteInfo(ctx context.Context, _ *gomcp.CallToolRequest, _ NoInput) (*gomcp.CallToolResult, SiteInfoOutput, error) {
	var out SiteInfoOutput
	site, err := t.site(ctx)
	if err != nil {
		return nil, out, err
	}
	_, total, err := t.store.SearchCourses(ctx, site.ID, storage.CourseQuery{Page: storage.Page{Limit: 1}})
	if err != nil {
		return nil, out, t.fail(ctx, "get_site_info", err)
	}
	cats, err := t.store.Categories(ctx, site.ID)
	if err != nil {
		return nil, out, t.fail(ctx, "get_site_info", err)
	}
	out = SiteInfoOutput{
		Name: site.Name, Description: site.Description, Origin: site.Origin, Locale: site.Locale,
		PublishedCourses: total, Categories: nonNil(cats), Registration: registration(site),
		Links: SiteLinks{
			LLMSTxt:                     site.URL(vocab.LLMSTxtPath),
			AuthMD:                      site.URL(vocab.AuthMDPath),
			PricingMD:                   site.URL(vocab.PricingMDPath),
			OpenAPI:                     site.URL(vocab.OpenAPIPath),
			MCP:                         site.URL(vocab.MCPPath),
			ProtectedResourceMetadata:   site.URL(vocab.ProtectedResourcePath),
			AuthorizationServerMetadata: site.URL(vocab.AuthorizationServerPath),
		},
		Access: AccessOutput{Scopes: []string{}, Tools: anonymous.toolNames()},
	}
	if c, ok := callerFrom(ctx); ok && c.token != nil {
		out.Access = AccessOutput{SignedIn: true, Scopes: nonNil(c.grants), Tools: c.toolNames()}
	}
	return nil, out, nil
}

// registration says in one sentence how a client gets a client_id here.
func registration(site *tenant.Site) string {
	if site.Variant == tenant.VariantOpen {
		return "Open dynamic client registration (RFC 7591) for clients with loopback redirect URIs; without a scope a client is a member client (account:read, account:write). See auth_md."
	}
	var b strings.Builder
	b.WriteString("No open registration: vendor platforms register by client_name; other clients use a Client ID Metadata Document from ")
	if site.CIMDOpen {
		b.WriteString("any host")
	} else {
		b.WriteString("an allowlisted host")
	}
	b.WriteString("; member clients are created by the site's operators. See auth_md.")
	return b.String()
}

// capped converts at most MaxPageSize items and records whether it cut.
func capped[T, O any](items []T, truncated *bool, f func(*T) O) []O {
	n := len(items)
	if n > MaxPageSize {
		n = MaxPageSize
		*truncated = true
	}
	out := make([]O, n)
	for i := range n {
		out[i] = f(&items[i])
	}
	return out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
