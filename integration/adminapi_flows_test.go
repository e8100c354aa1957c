package integration

import (
	"bytes"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lectern/lectern/adminapi"
	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/storage"
)

// admClient is the owner at one demo site with every operator scope.
type admClient struct {
	t      *testing.T
	ts     *testServer
	origin string
	tok    string
}

func admOwner(t *testing.T, ts *testServer, origin string) *admClient {
	return &admClient{t: t, ts: ts, origin: origin, tok: admOwnerToken(t, ts, origin, scope.OperatorScopes()...)}
}

func (c *admClient) do(method, path string, body any, want int) map[string]any {
	c.t.Helper()
	r := admDo(c.t, c.ts, method, c.origin, path, c.tok, body).want(c.t, want, method+" "+path)
	if len(r.body) == 0 {
		return nil
	}
	return r.obj(c.t)
}

func admPath(prefix string, id any) string {
	switch v := id.(type) {
	case float64:
		return prefix + "/" + strconv.FormatInt(int64(v), 10)
	case int64:
		return prefix + "/" + strconv.FormatInt(v, 10)
	}
	return prefix + "/" + id.(string)
}

// admActions are the admin API's audit actions at the site by the actor,
// oldest first (sign-in and authorization events left out).
func admActions(t *testing.T, ts *testServer, site *storage.Site, actor string) []string {
	t.Helper()
	var out []string
	es := admAudit(t, ts, *site)
	for i := len(es) - 1; i >= 0; i-- {
		a := es[i].Action
		if strings.HasPrefix(a, "login.") || strings.HasPrefix(a, "consent.") || strings.HasPrefix(a, "grant.") {
			continue
		}
		if es[i].Actor == actor {
			out = append(out, es[i].Action)
		}
	}
	return out
}

func TestAdminCoursesAndCurriculum(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		academy, _ := admSites(t, ts)
		c := admOwner(t, ts, ts.academy())
		course := c.do(http.MethodPost, "/courses", map[string]any{"slug": "rust-basics", "title": "Rust Basics", "priceCents": 3900, "currency": "EUR"}, 201)
		if course["status"] != "draft" || course["publishedAt"] != nil || course["currency"] != "EUR" {
			t.Fatalf("new course %v", course)
		}
		cp := admPath("/courses", course["id"])
		c.do(http.MethodPatch, cp, map[string]any{"subtitle": "Ownership and borrowing"}, 200)
		got := c.do(http.MethodGet, cp, nil, 200)
		if got["subtitle"] != "Ownership and borrowing" || got["title"] != "Rust Basics" {
			t.Fatalf("patched course %v", got)
		}
		pub := c.do(http.MethodPost, cp+"/publish", nil, 200)
		if pub["status"] != "published" || pub["publishedAt"] == nil {
			t.Fatalf("published course %v", pub)
		}
		if _, err := ts.app.Store.CourseBySlug(t.Context(), academy.ID, "rust-basics"); err != nil {
			t.Fatalf("the published course is not in the public catalog: %v", err)
		}
		c.do(http.MethodPost, cp+"/publish", nil, 200) // publishing again changes nothing
		if unpub := c.do(http.MethodPost, cp+"/unpublish", nil, 200); unpub["status"] != "draft" || unpub["publishedAt"] != nil {
			t.Fatalf("unpublished course %v", unpub)
		}
		if _, err := ts.app.Store.CourseBySlug(t.Context(), academy.ID, "rust-basics"); !errors.Is(err, storage.ErrNotFound) {
			t.Fatalf("the unpublished course is still public: %v", err)
		}

		s1 := c.do(http.MethodPost, cp+"/sections", map[string]any{"title": "Start"}, 201)
		s2 := c.do(http.MethodPost, cp+"/sections", map[string]any{"title": "Next"}, 201)
		if s1["position"] != float64(0) || s2["position"] != float64(1) {
			t.Fatalf("section positions %v, %v", s1["position"], s2["position"])
		}
		l1 := c.do(http.MethodPost, admPath("/sections", s1["id"])+"/lectures", map[string]any{"title": "Hello", "durationSeconds": 300}, 201)
		l2 := c.do(http.MethodPost, admPath("/sections", s1["id"])+"/lectures", map[string]any{"title": "Cargo", "status": "published", "freePreview": true}, 201)
		l3 := c.do(http.MethodPost, admPath("/sections", s2["id"])+"/lectures", map[string]any{"title": "Borrowing"}, 201)
		if l1["status"] != "draft" || l2["status"] != "published" || l2["position"] != float64(1) || l3["courseId"] != course["id"] {
			t.Fatalf("lectures %v %v %v", l1, l2, l3)
		}
		titles := func(cur map[string]any) string {
			var parts []string
			for _, s := range cur["sections"].([]any) {
				sec := s.(map[string]any)
				row := []string{sec["title"].(string)}
				for _, l := range sec["lectures"].([]any) {
					row = append(row, l.(map[string]any)["title"].(string))
				}
				parts = append(parts, strings.Join(row, ","))
			}
			return strings.Join(parts, " | ")
		}
		if got := titles(c.do(http.MethodGet, cp+"/curriculum", nil, 200)); got != "Start,Hello,Cargo | Next,Borrowing" {
			t.Fatalf("curriculum %q", got)
		}
		reordered := c.do(http.MethodPut, cp+"/curriculum", map[string]any{"sections": []map[string]any{
			{"sectionId": s2["id"], "lectureIds": []any{l3["id"], l1["id"]}},
			{"sectionId": s1["id"], "lectureIds": []any{l2["id"]}},
		}}, 200)
		if got := titles(reordered); got != "Next,Borrowing,Hello | Start,Cargo" {
			t.Fatalf("reordered curriculum %q", got)
		}
		c.do(http.MethodPatch, admPath("/lectures", l1["id"]), map[string]any{"title": "Hello, Rust", "status": "published"}, 200)
		c.do(http.MethodPatch, admPath("/sections", s1["id"]), map[string]any{"title": "Basics"}, 200)
		if got := titles(c.do(http.MethodGet, cp+"/curriculum", nil, 200)); got != "Next,Borrowing,Hello, Rust | Basics,Cargo" {
			t.Fatalf("curriculum after edits %q", got)
		}
		c.do(http.MethodDelete, admPath("/lectures", l2["id"]), nil, 204)
		c.do(http.MethodDelete, admPath("/sections", s1["id"]), nil, 204)
		c.do(http.MethodDelete, cp, nil, 204)
		c.do(http.MethodGet, cp, nil, 404)

		owner, _ := ts.app.Store.UserByEmail(t.Context(), demo.OwnerEmail)
		want := []string{"course.created", "course.updated", "course.published", "course.unpublished", "section.created", "section.created",
			"lecture.created", "lecture.created", "lecture.created", "curriculum.reordered", "lecture.updated", "section.updated",
			"lecture.deleted", "section.deleted", "course.deleted"}
		if got := admActions(t, ts, academy, owner.ID); !slices.Equal(got, want) {
			t.Fatalf("audit actions\n got %v\nwant %v", got, want)
		}
	})
}

// Lists page with opaque cursors: every row once, in order, totalCount
// the number of rows, and a null nextCursor on the last page.
func TestAdminPagination(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		c := admOwner(t, ts, ts.academy())
		for i := range 5 {
			c.do(http.MethodPost, "/lecturers", map[string]any{"slug": "lecturer-" + strconv.Itoa(i), "name": "L" + strconv.Itoa(i)}, 201)
		}
		collect := func(path string, limit int) ([]string, int) {
			var keys []string
			cursor := ""
			total := -1
			for range 50 {
				q := url.Values{"limit": {strconv.Itoa(limit)}}
				if cursor != "" {
					q.Set("cursor", cursor)
				}
				page := c.do(http.MethodGet, path+"?"+q.Encode(), nil, 200)
				if total >= 0 && int(page["totalCount"].(float64)) != total {
					t.Fatalf("totalCount changed between pages")
				}
				total = int(page["totalCount"].(float64))
				items := page["items"].([]any)
				if len(items) > limit {
					t.Fatalf("%d items on a page of %d", len(items), limit)
				}
				for _, it := range items {
					m := it.(map[string]any)
					if id, ok := m["id"].(float64); ok {
						keys = append(keys, strconv.FormatInt(int64(id), 10))
					} else {
						keys = append(keys, m["userId"].(string))
					}
				}
				next, _ := page["nextCursor"].(string)
				if next == "" {
					return keys, total
				}
				cursor = next
			}
			t.Fatal("the pages never end")
			return nil, 0
		}
		ids, total := collect("/lecturers", 2)
		if len(ids) != total || total < 5 {
			t.Fatalf("%d lecturers over the pages, totalCount %d", len(ids), total)
		}
		nums := make([]int, len(ids))
		for i, id := range ids {
			nums[i], _ = strconv.Atoi(id)
		}
		if !slices.IsSorted(nums) || len(slices.Compact(slices.Clone(nums))) != len(nums) {
			t.Fatalf("lecturer ids %v are not ascending and unique", nums)
		}
		// Students (ordered by e-mail, offset cursors).
		c.do(http.MethodPost, "/members", map[string]any{"email": demo.OutsiderEmail, "role": "student"}, 200)
		c.do(http.MethodPost, "/members", map[string]any{"email": demo.LecturerEmail, "role": "student"}, 200)
		users, total := collect("/students", 1)
		if len(users) != 3 || total != 3 || len(slices.Compact(slices.Clone(users))) != 3 {
			t.Fatalf("students over the pages %v (total %d)", users, total)
		}
		members, total := collect("/members", 2)
		if len(members) != total || total != 4 {
			t.Fatalf("members over the pages %v (total %d)", members, total)
		}
	})
}

func TestAdminStudentsMembersReports(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		c := admOwner(t, ts, ts.academy())
		courses := c.do(http.MethodGet, "/courses", nil, 200)["items"].([]any)
		first := courses[0].(map[string]any)
		exp := time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)
		enr := c.do(http.MethodPost, "/enrollments", map[string]any{"email": demo.OutsiderEmail, "courseId": first["id"], "expiresAt": exp}, 201)
		if enr["lifetimeAccess"] != false || enr["courseSlug"] != first["slug"] {
			t.Fatalf("enrollment %v", enr)
		}
		outsider := enr["userId"].(string)
		st := c.do(http.MethodGet, "/students/"+outsider, nil, 200)
		if st["email"] != demo.OutsiderEmail || len(st["enrollmentList"].([]any)) != 1 {
			t.Fatalf("student %v", st)
		}
		admProblem(t, admDo(t, ts, http.MethodGet, ts.academy(), "/students?search=%00", c.tok, nil), 400, "search", "a NUL in the search")
		if found := c.do(http.MethodGet, "/students?search=OUTSIDER", nil, 200); found["totalCount"] != float64(1) {
			t.Fatalf("search %v", found)
		}
		life := c.do(http.MethodPatch, admPath("/enrollments", enr["id"]), map[string]any{"lifetimeAccess": true}, 200)
		if life["lifetimeAccess"] != true || life["expiresAt"] != nil {
			t.Fatalf("lifetime enrollment %v", life)
		}
		c.do(http.MethodPatch, admPath("/enrollments", enr["id"]), map[string]any{"expiresAt": exp}, 200)
		c.do(http.MethodDelete, admPath("/enrollments", enr["id"]), nil, 204)
		if st := c.do(http.MethodGet, "/students/"+outsider, nil, 200); len(st["enrollmentList"].([]any)) != 0 {
			t.Fatalf("enrollments after unenrolling %v", st)
		}

		owners := c.do(http.MethodGet, "/members?role=owner", nil, 200)
		if owners["totalCount"] != float64(1) || owners["items"].([]any)[0].(map[string]any)["email"] != demo.OwnerEmail {
			t.Fatalf("owners %v", owners)
		}
		if m := c.do(http.MethodGet, "/members/"+outsider, nil, 200); !slices.Equal(admStrings(m["roles"]), []string{"student"}) {
			t.Fatalf("member %v", m)
		}

		from := url.QueryEscape(time.Now().Add(-365 * 24 * time.Hour).UTC().Format(time.RFC3339))
		to := url.QueryEscape(time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339))
		sales := c.do(http.MethodGet, "/analytics/sales?from="+from+"&to="+to, nil, 200)
		orders := c.do(http.MethodGet, "/orders", nil, 200)
		if sales["orders"] != orders["totalCount"] || sales["orders"].(float64) < 1 {
			t.Fatalf("sales %v; orders %v", sales, orders["totalCount"])
		}
		enrolls := c.do(http.MethodGet, "/analytics/enrollments?from="+from+"&to="+to, nil, 200)
		if enrolls["total"].(float64) < 2 || len(enrolls["courses"].([]any)) == 0 {
			t.Fatalf("enrollment summary %v", enrolls)
		}
		o := orders["items"].([]any)[0].(map[string]any)
		got := c.do(http.MethodGet, admPath("/orders", o["id"]), nil, 200)
		if got["number"] != o["number"] || got["customerEmail"] == "" || len(got["items"].([]any)) == 0 {
			t.Fatalf("order %v", got)
		}
		for _, f := range []string{"couponCode", "refundStatus"} {
			if _, ok := got[f]; !ok {
				t.Fatalf("order lacks %s: %v", f, got)
			}
		}
	})
}

func admStrings(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}

// School settings, and the member OAuth applications behind the MCP
// connections beta: created through the API, usable by a member at once,
// and their tokens dead once deleted.
func TestAdminSchoolAndOAuthApplications(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		academy, _ := admSites(t, ts)
		c := admOwner(t, ts, ts.academy())
		school := c.do(http.MethodGet, "/school", nil, 200)
		if school["name"] != demo.AcademyName || school["registrationVariant"] != "A" || school["betaFeatures"].(map[string]any)["mcpConnections"] != true {
			t.Fatalf("school %v", school)
		}
		upd := c.do(http.MethodPatch, "/school", map[string]any{"name": "Demo Academy II", "locale": "pt-BR"}, 200)
		if upd["name"] != "Demo Academy II" || upd["locale"] != "pt-BR" || upd["registrationVariant"] != "A" {
			t.Fatalf("updated school %v", upd)
		}

		apps := c.do(http.MethodGet, "/oauth-applications", nil, 200)["items"].([]any)
		if len(apps) != 1 || apps[0].(map[string]any)["clientId"] != demo.MemberClientID {
			t.Fatalf("applications %v", apps)
		}
		pub := c.do(http.MethodPost, "/oauth-applications", map[string]any{"name": "Study buddy", "redirectUris": []string{"http://127.0.0.1/callback"}}, 201)
		if _, ok := pub["clientSecret"]; ok || pub["type"] != "public" || len(pub["scopes"].([]any)) != 5 {
			t.Fatalf("public application %v", pub)
		}
		conf := c.do(http.MethodPost, "/oauth-applications", map[string]any{"name": "Portal", "redirectUris": []string{"https://portal.example/cb"},
			"scopes": []string{"openid", "account:read"}, "confidential": true}, 201)
		secret, _ := conf["clientSecret"].(string)
		if secret == "" || conf["type"] != "confidential" || conf["applicationType"] != "web" {
			t.Fatalf("confidential application %v", conf)
		}
		rot := c.do(http.MethodPost, admPath("/oauth-applications", conf["clientId"])+"/rotate-secret", nil, 200)
		if rot["clientSecret"] == secret || rot["clientSecret"] == "" {
			t.Fatalf("rotation kept the secret: %v", rot)
		}
		admProblem(t, admDo(t, ts, http.MethodPost, ts.academy(), admPath("/oauth-applications", pub["clientId"])+"/rotate-secret", c.tok, nil), 422, "type", "rotating a public application's secret")
		// An operator makes a confidential application one of the site's
		// resource servers: it may then introspect other clients' tokens.
		member := ts.studentToken(t, ts.academy())
		introspect := func() any {
			return ts.introspect(t, ts.academy(), conf["clientId"].(string), rot["clientSecret"].(string), member.AccessToken)["active"]
		}
		if conf["resourceServer"] != false || introspect() != false {
			t.Fatalf("a new application is a resource server: %v", conf)
		}
		if rs := c.do(http.MethodPatch, admPath("/oauth-applications", conf["clientId"]), map[string]any{"resourceServer": true}, 200); rs["resourceServer"] != true {
			t.Fatalf("marked as resource server: %v", rs)
		}
		eventually(t, 5*time.Second, func() error {
			if introspect() != true {
				return errors.New("the resource server cannot introspect a member's token")
			}
			return nil
		})
		admProblem(t, admDo(t, ts, http.MethodPatch, ts.academy(), admPath("/oauth-applications", pub["clientId"]), c.tok, map[string]any{"resourceServer": true}), 422, "resourceServer", "a public resource server")
		admProblem(t, admDo(t, ts, http.MethodPost, ts.academy(), "/oauth-applications", c.tok, map[string]any{"name": "X", "redirectUris": []string{"http://127.0.0.1/cb"}, "resourceServer": true}), 422, "resourceServer", "creating a public resource server")
		admProblem(t, admDo(t, ts, http.MethodPatch, ts.academy(), admPath("/oauth-applications", pub["clientId"]), c.tok, map[string]any{"scopes": []string{"courses:read"}}), 422, "scopes", "an operator scope for a member application")
		ren := c.do(http.MethodPatch, admPath("/oauth-applications", pub["clientId"]), map[string]any{"name": "Study Buddy"}, 200)
		if ren["name"] != "Study Buddy" {
			t.Fatalf("renamed application %v", ren)
		}
		// Paged like every list: the seed's application, then the two new
		// ones, oldest first; registered (DCR) clients are not listed.
		var names []any
		for cursor := ""; ; {
			path := "/oauth-applications?limit=2"
			if cursor != "" {
				path += "&cursor=" + url.QueryEscape(cursor)
			}
			page := c.do(http.MethodGet, path, nil, 200)
			if page["totalCount"] != 3.0 {
				t.Fatalf("applications page %v", page)
			}
			for _, a := range page["items"].([]any) {
				names = append(names, a.(map[string]any)["name"])
			}
			next, _ := page["nextCursor"].(string)
			if next == "" {
				break
			}
			cursor = next
		}
		if want := []any{"Demo Member App", "Study Buddy", "Portal"}; !slices.Equal(names, want) {
			t.Fatalf("applications paged by 2: %v; want %v", names, want)
		}
		admProblem(t, admDo(t, ts, http.MethodGet, ts.academy(), "/oauth-applications?limit=1000", c.tok, nil), 400, "limit", "a page of 1000 applications")

		// A member authorizes the new application at once, and loses the
		// token when it is deleted.
		f := newFlow(t, ts, ts.academy(), pub["clientId"].(string), scope.MemberDefault()...)
		tok, err := f.exchange(f.authorize(demo.StudentEmail, demo.StudentPassword))
		if err != nil {
			t.Fatalf("a member authorizes the new application: %v", err)
		}
		if code, _, _ := f.userinfo(tok.AccessToken); code != http.StatusOK {
			t.Fatalf("userinfo with the application's token: %d", code)
		}
		c.do(http.MethodDelete, admPath("/oauth-applications", pub["clientId"]), nil, 204)
		c.do(http.MethodGet, admPath("/oauth-applications", pub["clientId"]), nil, 404)
		if code, _, _ := f.userinfo(tok.AccessToken); code != http.StatusUnauthorized {
			t.Fatalf("userinfo after the application was deleted: %d; want 401", code)
		}
		// Vendor and other sites' clients are not applications of the site.
		c.do(http.MethodGet, "/oauth-applications/"+demo.VendorClientID, nil, 404)

		owner, _ := ts.app.Store.UserByEmail(t.Context(), demo.OwnerEmail)
		acts := admActions(t, ts, academy, owner.ID)
		for _, want := range []string{"school.updated", "client.created", "client.secret_rotated", "client.updated", "client.deleted"} {
			if !slices.Contains(acts, want) {
				t.Errorf("no %s audit event in %v", want, acts)
			}
		}

		// Open School has the beta off: the applications do not exist there
		// until an owner turns it on.
		o := admOwner(t, ts, ts.open())
		p := admProblem(t, admDo(t, ts, http.MethodGet, ts.open(), "/oauth-applications", o.tok, nil), 404, "", "applications with the beta off")
		if p["type"] != "urn:lectern:problem:feature-disabled" {
			t.Fatalf("problem %v", p)
		}
		admProblem(t, admDo(t, ts, http.MethodPost, ts.open(), "/oauth-applications", o.tok, map[string]any{"name": "X", "redirectUris": []string{"http://127.0.0.1/cb"}}), 404, "", "creating with the beta off")
		on := o.do(http.MethodPatch, "/school", map[string]any{"betaFeatures": map[string]any{"mcpConnections": true}}, 200)
		if on["betaFeatures"].(map[string]any)["mcpConnections"] != true {
			t.Fatalf("school %v", on)
		}
		eventually(t, 10*time.Second, func() error {
			if r := admDo(t, ts, http.MethodGet, ts.open(), "/oauth-applications", o.tok, nil); r.status != http.StatusOK {
				return errors.New(string(r.body))
			}
			return nil
		})
	})
}

func TestAdminFilesAndAppearance(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		c := admOwner(t, ts, ts.academy())
		def := c.do(http.MethodGet, "/appearance", nil, 200)
		if def["logoUrl"] != nil || def["primaryColor"] == "" {
			t.Fatalf("default appearance %v", def)
		}
		up := admUpload(t, ts, ts.academy(), c.tok, "../logo.png", "image/png", admPNG).want(t, http.StatusCreated, "upload").obj(t)
		if up["name"] != "logo.png" || up["contentType"] != "image/png" || up["sizeBytes"] != float64(len(admPNG)) || !strings.HasPrefix(up["url"].(string), ts.academy()+"/uploads/") {
			t.Fatalf("uploaded file %v", up)
		}
		code, hdr, body := ts.get(t, up["url"].(string), "")
		if code != 200 || !bytes.Equal(body, admPNG) || hdr.Get("Content-Type") != "image/png" || hdr.Get("X-Content-Type-Options") != "nosniff" ||
			!strings.Contains(hdr.Get("Content-Security-Policy"), "sandbox") {
			t.Fatalf("serving the upload: %d %v", code, hdr)
		}
		if code, _, _ := ts.get(t, up["url"].(string), "", "If-None-Match", hdr.Get("ETag")); code != http.StatusNotModified {
			t.Fatalf("revalidating the upload: %d", code)
		}
		c.do(http.MethodGet, admPath("/files", up["id"]), nil, 200)
		look := c.do(http.MethodPut, "/appearance", map[string]any{"primaryColor": "#AA0000", "accentColor": "#00aa00", "backgroundColor": "#ffffff", "textColor": "#111111", "logoFileId": up["id"]}, 200)
		if look["logoUrl"] != up["url"] || look["primaryColor"] != "#aa0000" {
			t.Fatalf("appearance %v", look)
		}
		if got := c.do(http.MethodGet, "/appearance", nil, 200); got["logoFileId"] != up["id"] {
			t.Fatalf("appearance read back %v", got)
		}
		admProblem(t, admDo(t, ts, http.MethodDelete, ts.academy(), admPath("/files", up["id"]), c.tok, nil), 409, "", "deleting the logo")

		// Refused uploads: a script posing as an image, a type not accepted,
		// too many bytes, no file part.
		admProblem(t, admUpload(t, ts, ts.academy(), c.tok, "x.png", "image/png", []byte("<script>alert(1)</script>")), 415, "file", "HTML declared as PNG")
		admProblem(t, admUpload(t, ts, ts.academy(), c.tok, "x.svg", "image/svg+xml", []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`)), 415, "file", "an SVG")
		// Uploads are not held to the 1 MiB cap of other bodies: 2 MB is
		// fine, 10 MiB and a byte is not, nor a body past the upload cap.
		fine := append(slices.Clone(admPNG), make([]byte, 2_000_000)...)
		got := admUpload(t, ts, ts.academy(), c.tok, "fine.png", "image/png", fine).want(t, http.StatusCreated, "a 2 MB upload").obj(t)
		c.do(http.MethodDelete, admPath("/files", got["id"]), nil, 204)
		big := append(slices.Clone(admPNG), make([]byte, adminapi.DefaultMaxUploadBytes+1-len(admPNG))...)
		// Every 413 is a problem document (RFC 9457), whether the handler or
		// the server's body limit, before any handler runs, refused it.
		admProblem(t, admUpload(t, ts, ts.academy(), c.tok, "big.png", "image/png", big), http.StatusRequestEntityTooLarge, "", "a too large upload")
		huge := append(slices.Clone(admPNG), make([]byte, adminapi.UploadBodyLimit)...)
		admProblem(t, admUpload(t, ts, ts.academy(), c.tok, "huge.png", "image/png", huge), http.StatusRequestEntityTooLarge, "", "an upload body over the cap")
		// Other routes keep the 1 MiB cap.
		if p := admProblem(t, admDo(t, ts, http.MethodPost, ts.academy(), "/courses", c.tok, bytes.Repeat([]byte(" "), 2<<20)), http.StatusRequestEntityTooLarge, "", "a 2 MiB JSON body"); !strings.Contains(p["detail"].(string), "1 MiB") {
			t.Fatalf("a 2 MiB JSON body: %v does not say the limit", p)
		}
		admProblem(t, admDo(t, ts, http.MethodPost, ts.academy(), "/files", c.tok, []byte(`{}`)), 415, "", "JSON instead of a form")

		c.do(http.MethodPut, "/appearance", map[string]any{"primaryColor": "#000000", "accentColor": "#000000", "backgroundColor": "#ffffff", "textColor": "#000000"}, 200)
		c.do(http.MethodDelete, admPath("/files", up["id"]), nil, 204)
		if code, _, _ := ts.get(t, up["url"].(string), ""); code != http.StatusNotFound {
			t.Fatalf("a deleted upload is served: %d", code)
		}
	})
}

// The catalog kinds with plain create, read, change, list and delete.
func TestAdminCatalogResources(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		c := admOwner(t, ts, ts.academy())
		for _, tc := range []struct {
			coll   string
			create map[string]any
			patch  map[string]any
			check  func(created, patched map[string]any) bool
		}{
			{"/events", map[string]any{"slug": "meetup", "title": "Meetup", "startsAt": "2030-05-01T18:00:00+02:00", "endsAt": "2030-05-01T20:00:00+02:00", "capacity": 40},
				map[string]any{"public": false, "status": "published"},
				func(c, p map[string]any) bool {
					return c["startsAt"] == "2030-05-01T16:00:00Z" && c["public"] == true && c["status"] == "draft" && p["public"] == false
				}},
			{"/membership-plans", map[string]any{"slug": "pro", "title": "Pro", "interval": "month", "priceCents": 1500},
				map[string]any{"interval": "year"},
				func(c, p map[string]any) bool { return c["interval"] == "month" && p["interval"] == "year" }},
			{"/coupons", map[string]any{"code": "spring-25", "percentOff": 25, "maxRedemptions": 100},
				map[string]any{"active": false},
				func(c, p map[string]any) bool {
					return c["code"] == "SPRING-25" && c["percentOff"] == float64(25) && c["amountOffCents"] == nil && c["active"] == true && p["active"] == false
				}},
			{"/posts", map[string]any{"slug": "welcome", "title": "Welcome", "body": "Hello\nworld"},
				map[string]any{"status": "published"},
				func(c, p map[string]any) bool {
					return c["publishedAt"] == nil && p["publishedAt"] != nil && c["authorId"] != ""
				}},
			{"/pages", map[string]any{"slug": "about", "title": "About", "status": "published"},
				map[string]any{"body": "We teach."},
				func(c, p map[string]any) bool { return c["status"] == "published" && p["body"] == "We teach." }},
			{"/digital-products", map[string]any{"slug": "ebook", "title": "E-book", "priceCents": 900},
				map[string]any{"title": "The e-book"},
				func(c, p map[string]any) bool { return p["title"] == "The e-book" && p["priceCents"] == float64(900) }},
			{"/lecturers", map[string]any{"slug": "ada", "name": "Ada"},
				map[string]any{"bio": "Wrote the first program."},
				func(c, p map[string]any) bool { return p["bio"] == "Wrote the first program." && p["userId"] == nil }},
		} {
			created := c.do(http.MethodPost, tc.coll, tc.create, 201)
			path := admPath(tc.coll, created["id"])
			if got := c.do(http.MethodGet, path, nil, 200); got["id"] != created["id"] {
				t.Fatalf("%s: read back %v", tc.coll, got)
			}
			patched := c.do(http.MethodPatch, path, tc.patch, 200)
			if !tc.check(created, patched) {
				t.Fatalf("%s: created %v, patched %v", tc.coll, created, patched)
			}
			listed := c.do(http.MethodGet, tc.coll+"?limit=100", nil, 200)
			found := false
			for _, it := range listed["items"].([]any) {
				if it.(map[string]any)["id"] == created["id"] {
					found = true
				}
			}
			if !found {
				t.Fatalf("%s: the new row is not listed", tc.coll)
			}
			c.do(http.MethodDelete, path, nil, 204)
			c.do(http.MethodGet, path, nil, 404)
		}
	})
}

func TestAdminSubscriptionsCommentsForms(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		academy, _ := admSites(t, ts)
		c := admOwner(t, ts, ts.academy())
		plan := c.do(http.MethodPost, "/membership-plans", map[string]any{"slug": "club", "title": "Club", "interval": "month"}, 201)
		end := time.Now().Add(30 * 24 * time.Hour).UTC().Format(time.RFC3339)
		s1 := c.do(http.MethodPost, "/subscriptions", map[string]any{"email": demo.StudentEmail, "planId": plan["id"], "currentPeriodEnd": end}, 201)
		s2 := c.do(http.MethodPost, "/subscriptions", map[string]any{"email": demo.OutsiderEmail, "planId": plan["id"], "currentPeriodEnd": end}, 201)
		later := c.do(http.MethodPost, admPath("/subscriptions", s1["id"])+"/cancel", map[string]any{"atPeriodEnd": true}, 200)
		if later["status"] != "active" || later["cancelAtPeriodEnd"] != true || later["canceledAt"] != nil {
			t.Fatalf("cancel at period end %v", later)
		}
		now := c.do(http.MethodPost, admPath("/subscriptions", s2["id"])+"/cancel", nil, 200)
		if now["status"] != "canceled" || now["canceledAt"] == nil {
			t.Fatalf("cancel now %v", now)
		}
		if active := c.do(http.MethodGet, "/subscriptions?status=active", nil, 200); active["totalCount"] != float64(1) {
			t.Fatalf("active subscriptions %v", active)
		}
		admProblem(t, admDo(t, ts, http.MethodGet, ts.academy(), "/subscriptions?status=paused", c.tok, nil), 400, "status", "an unknown status")

		// Comments and form submissions come from members; the fixtures go
		// straight to the store.
		ctx := t.Context()
		student, _ := ts.app.Store.UserByEmail(ctx, demo.StudentEmail)
		post := c.do(http.MethodPost, "/posts", map[string]any{"slug": "news", "title": "News", "status": "published"}, 201)
		postID := int64(post["id"].(float64))
		courses := c.do(http.MethodGet, "/courses", nil, 200)["items"].([]any)
		courseID := int64(courses[0].(map[string]any)["id"].(float64))
		for _, cm := range []*storage.Comment{{UserID: student.ID, Body: "On the post", PostID: &postID}, {UserID: student.ID, Body: "On the course", CourseID: &courseID}} {
			if err := ts.app.Store.CommentRecords().Create(ctx, academy.ID, cm); err != nil {
				t.Fatal(err)
			}
		}
		onPost := c.do(http.MethodGet, "/comments?postId="+strconv.FormatInt(postID, 10), nil, 200)
		if onPost["totalCount"] != float64(1) || onPost["items"].([]any)[0].(map[string]any)["body"] != "On the post" {
			t.Fatalf("comments on the post %v", onPost)
		}
		all := c.do(http.MethodGet, "/comments", nil, 200)
		if all["totalCount"] != float64(3) { // and the demo's one
			t.Fatalf("comments %v", all)
		}
		c.do(http.MethodGet, admPath("/comments", all["items"].([]any)[0].(map[string]any)["id"]), nil, 200)

		form := &storage.Form{Slug: "waitlist", Title: "Wait list", Fields: []storage.FormField{{Name: "email", Label: "E-mail", Type: "email", Required: true}}}
		if err := ts.app.Store.FormRecords().Create(ctx, academy.ID, form); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			sub := &storage.FormSubmission{FormID: form.ID, Email: "v" + strconv.Itoa(i) + "@example.test", Data: map[string]string{"email": "v" + strconv.Itoa(i) + "@example.test"}}
			if i == 0 {
				sub.UserID = &student.ID
			}
			if err := ts.app.Store.FormSubmissionRecords().Create(ctx, academy.ID, sub); err != nil {
				t.Fatal(err)
			}
		}
		forms := c.do(http.MethodGet, "/forms", nil, 200)
		if forms["totalCount"] != float64(2) || len(forms["items"].([]any)[1].(map[string]any)["fields"].([]any)) != 1 { // the demo's contact form first
			t.Fatalf("forms %v", forms)
		}
		p1 := c.do(http.MethodGet, "/forms/"+strconv.FormatInt(form.ID, 10)+"/submissions?limit=2", nil, 200)
		p2 := c.do(http.MethodGet, "/forms/"+strconv.FormatInt(form.ID, 10)+"/submissions?limit=2&cursor="+url.QueryEscape(p1["nextCursor"].(string)), nil, 200)
		if p1["totalCount"] != float64(3) || len(p1["items"].([]any)) != 2 || len(p2["items"].([]any)) != 1 || p2["nextCursor"] != nil {
			t.Fatalf("submission pages %v / %v", p1, p2)
		}
		if d := p1["items"].([]any)[0].(map[string]any); d["userId"] != student.ID || d["data"].(map[string]any)["email"] != "v0@example.test" {
			t.Fatalf("submission %v", d)
		}
	})
}
