package integration

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lectern/lectern/authserver/clientmeta"
	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/platform"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/vocab"
)

// introspect asks origin's introspection endpoint about token as the
// client id/secret.
func (ts *testServer) introspect(t *testing.T, origin, id, secret, token string) map[string]any {
	t.Helper()
	status, _, body := ts.postForm(t, origin+vocab.IntrospectionPath, url.Values{"token": {token}, "client_id": {id}, "client_secret": {secret}})
	if status != 200 {
		t.Fatalf("introspection as %s: %d %v", id, status, body)
	}
	return body
}

// wantInactive fails unless body is exactly {"active": false}: nothing
// about the token, not even that it exists.
func wantInactive(t *testing.T, what string, body map[string]any) {
	t.Helper()
	if len(body) != 1 || body["active"] != false {
		t.Errorf("%s: %v; want exactly {\"active\": false}", what, body)
	}
}

// RFC 7662 §4: a client introspects the tokens issued to itself; other
// clients' access tokens only when an operator marked it as one of the
// site's resource servers (never through registration); other clients'
// refresh tokens never. At a Variant B site anyone can register a
// confidential client, so without this rule anyone could read the owner's
// operator token.
func TestIntrospectionOnlyOwnTokensOrResourceServers(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		ctx := context.Background()
		origin := ts.open()
		site, err := ts.app.Store.SiteBySlug(ctx, demo.OpenSlug)
		if err != nil {
			t.Fatal(err)
		}

		// Someone registers a confidential client, asking to be a resource
		// server; registration does not make one.
		_, _, reg := ts.register(t, ts.clientFrom(nextSourceIP()), origin, "application/json", mustJSON(map[string]any{
			"client_name": "Curious app", "redirect_uris": []string{callback},
			"token_endpoint_auth_method": "client_secret_post", "resource_server": true,
		}))
		curiousID, _ := reg["client_id"].(string)
		curiousSecret, _ := reg["client_secret"].(string)
		if curiousID == "" || curiousSecret == "" {
			t.Fatalf("registering a confidential client: %v", reg)
		}
		if c, err := ts.app.Store.ClientByID(ctx, site.ID, curiousID); err != nil || c.ResourceServer {
			t.Fatalf("registered client: %+v %v; want no resource server", c, err)
		}

		student := ts.studentToken(t, origin)
		owner := ts.ownerToken(t, origin, "students:read")
		for name, tok := range map[string]string{
			"a member's access token":   student.AccessToken,
			"a member's refresh token":  student.RefreshToken,
			"the owner's access token":  owner.AccessToken,
			"the owner's refresh token": owner.RefreshToken,
		} {
			wantInactive(t, "registered client introspects "+name, ts.introspect(t, origin, curiousID, curiousSecret, tok))
		}

		// Its own tokens it may introspect.
		f := newFlow(t, ts, origin, curiousID, scope.MemberDefault()...)
		f.conf.ClientSecret = curiousSecret
		own, err := f.exchange(f.authorize(demo.StudentEmail, demo.StudentPassword))
		if err != nil {
			t.Fatal(err)
		}
		if body := ts.introspect(t, origin, curiousID, curiousSecret, own.AccessToken); body["active"] != true || body["client_id"] != curiousID || body["aud"] != origin {
			t.Errorf("own access token: %v", body)
		}
		if body := ts.introspect(t, origin, curiousID, curiousSecret, own.RefreshToken); body["active"] != true || body["token_type"] != "refresh_token" {
			t.Errorf("own refresh token: %v", body)
		}

		// An operator's resource server reads every access token of the
		// site, and still no other client's refresh token.
		rs, rsSecret, err := ts.app.Platform.CreateClient(ctx, site.ID, clientmeta.ClientSpec{
			Name: "Course API", RedirectURIs: []string{callback}, Audience: storage.AudienceMember, Confidential: true,
			Source: storage.SourceAdmin, Reviewed: true, ResourceServer: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		for name, tok := range map[string]string{"member": student.AccessToken, "owner": owner.AccessToken, "registered client": own.AccessToken} {
			if body := ts.introspect(t, origin, rs.ClientID, rsSecret, tok); body["active"] != true || body["aud"] != origin {
				t.Errorf("resource server introspects the %s's access token: %v", name, body)
			}
		}
		wantInactive(t, "resource server introspects a member's refresh token", ts.introspect(t, origin, rs.ClientID, rsSecret, student.RefreshToken))

		// Taking the mark away takes the access away.
		no := false
		if _, err := ts.app.Platform.UpdateApplication(ctx, site.ID, rs.ClientID, platform.ApplicationChange{ResourceServer: &no}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 5*time.Second, func() error {
			if body := ts.introspect(t, origin, rs.ClientID, rsSecret, student.AccessToken); body["active"] != false {
				return fmt.Errorf("still active: %v", body)
			}
			return nil
		})

		// Only operators make resource servers, and only confidential ones.
		for name, spec := range map[string]clientmeta.ClientSpec{
			"registration":  {Name: "x", RedirectURIs: []string{callback}, LoopbackOnly: true, Confidential: true, Source: storage.SourceDCR, ResourceServer: true},
			"public client": {Name: "x", RedirectURIs: []string{callback}, Source: storage.SourceAdmin, ResourceServer: true},
		} {
			if _, _, err := ts.app.Platform.CreateClient(ctx, site.ID, spec); err == nil {
				t.Errorf("%s made a resource server", name)
			}
		}
	})
}

// In the admin area an owner marks a confidential application as a resource
// server (on its page, or when creating it) and takes the mark away again;
// a public application cannot be one.
func TestWebMarksResourceServer(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	owner := webSignIn(t, ts, ts.academy(), demo.OwnerEmail, demo.OwnerPassword)
	member := ts.studentToken(t, ts.academy())
	appID, secret := owner.createApp("Course API", "confidential", "https://api.academy.example/cb", webMemberScopes...)
	app := "/admin/developers/apps/" + appID
	active := func() any { return ts.introspect(t, ts.academy(), appID, secret, member.AccessToken)["active"] }
	if got := webTextByID(t, owner.expect(app, http.StatusOK).Body, "app-introspection"); !strings.Contains(got, "own tokens only") || active() != false {
		t.Fatalf("a new confidential application: %q", got)
	}

	edit := webAppValues(owner.csrf(), "Course API", "https://api.academy.example/cb", "", webMemberScopes...)
	edit.Set("resource_server", "yes")
	owner.expectPost(app, edit, http.StatusSeeOther)
	if got := webTextByID(t, owner.expect(app, http.StatusOK).Body, "app-introspection"); !strings.Contains(got, "a resource server") {
		t.Fatalf("after marking: %q", got)
	}
	eventually(t, 5*time.Second, func() error {
		if active() != true {
			return errors.New("the resource server cannot introspect a member's token")
		}
		return nil
	})
	edit.Del("resource_server")
	owner.expectPost(app, edit, http.StatusSeeOther)
	eventually(t, 5*time.Second, func() error {
		if active() != false {
			return errors.New("the mark was taken away, the access was not")
		}
		return nil
	})

	created := webAppValues(owner.csrf(), "Gateway", "https://gw.academy.example/cb", "confidential", webMemberScopes...)
	created.Set("resource_server", "yes")
	res := owner.expectPost("/admin/developers/apps", created, http.StatusSeeOther)
	if got := webTextByID(t, owner.expect(res.Header.Get("Location"), http.StatusOK).Body, "app-introspection"); !strings.Contains(got, "a resource server") {
		t.Fatalf("created as a resource server: %q", got)
	}
	public := webAppValues(owner.csrf(), "Device", "http://127.0.0.1/cb", "public", webMemberScopes...)
	public.Set("resource_server", "yes")
	page := owner.expectPost("/admin/developers/apps", public, http.StatusBadRequest)
	if got := webTextByID(t, page.Body, "app-resource-server-error"); !strings.Contains(got, "confidential") {
		t.Fatalf("a public resource server: %q", got)
	}
}
