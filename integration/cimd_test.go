package integration

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/oauthtest"
	"github.com/lectern/lectern/internal/server"
)

// cimdServer serves Client ID Metadata Documents at /good.json (valid) and
// /missing.json (404) over TLS.
func cimdServer(t *testing.T) (*httptest.Server, *x509.CertPool) {
	t.Helper()
	var base string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/good.json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"client_id": base + "/good.json", "client_name": "Docs Agent", "redirect_uris": []string{callback},
			"token_endpoint_auth_method": "none",
		})
	}))
	t.Cleanup(srv.Close)
	base = srv.URL
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	return srv, roots
}

func TestCIMDRules(t *testing.T) {
	doc, roots := cimdServer(t)
	ts := startServer(t, backend{name: "embedded"}, &serverOptions{configure: func(c *server.Config) { c.CIMDTestRoots = roots }})
	host := strings.TrimPrefix(doc.URL, "https://")
	owner := oauthtest.Options{Email: demo.OwnerEmail, Password: demo.OwnerPassword}
	ctx := context.Background()

	t.Run("a host that is not allowed gets an error page", func(t *testing.T) {
		f := newFlow(t, ts, ts.academy(), doc.URL+"/good.json", "openid", "courses:read")
		out, err := f.browser.Authorize(f.authURL(), owner)
		if err != nil {
			t.Fatal(err)
		}
		if out.Redirect != nil || out.Page.Status != 400 || !strings.Contains(out.Page.Body, "not accepted") {
			t.Fatalf("want an error page naming the refusal; got %+v", out)
		}
	})
	if _, err := ts.app.Platform.AllowCIMDHost(ctx, host, demo.AcademySlug, false); err != nil {
		t.Fatal(err)
	}
	t.Run("a document that fails to fetch gets an error page", func(t *testing.T) {
		f := newFlow(t, ts, ts.academy(), doc.URL+"/missing.json", "openid")
		out, err := f.browser.Authorize(f.authURL(), owner)
		if err != nil {
			t.Fatal(err)
		}
		if out.Redirect != nil || out.Page.Status != 400 || !strings.Contains(out.Page.Body, "404") {
			t.Fatalf("want an error page with the fetch failure; got %+v", out)
		}
	})
	t.Run("an unreviewed client may not ask for write scopes", func(t *testing.T) {
		f := newFlow(t, ts, ts.academy(), doc.URL+"/good.json", "openid", "courses:write")
		out, err := f.browser.Authorize(f.authURL(), owner)
		if err != nil {
			t.Fatal(err)
		}
		q := out.Redirect.Query()
		if q.Get("error") != "invalid_scope" || !strings.Contains(q.Get("error_description"), "unreviewed") {
			t.Fatalf("redirect %s; want invalid_scope explaining the client is unreviewed", out.Redirect)
		}
	})
	t.Run("the consent page names the document host and warns", func(t *testing.T) {
		f := newFlow(t, ts, ts.academy(), doc.URL+"/good.json", "openid", "courses:read")
		out, err := f.browser.Authorize(f.authURL(oauth2.SetAuthURLParam("prompt", "consent")), oauthtest.Options{Email: demo.OwnerEmail, Password: demo.OwnerPassword, Decision: "deny"})
		if err != nil {
			t.Fatal(err)
		}
		if out.Redirect == nil || out.Redirect.Query().Get("error") != "access_denied" {
			t.Fatalf("%+v", out)
		}
		// Render the page itself to read it.
		b := oauthtest.NewBrowser(ts.addr)
		page, err := b.Get(f.authURL())
		for err == nil && page.Status == http.StatusFound {
			page, err = b.Get(page.URL.ResolveReference(mustURL(page.Header.Get("Location"))).String())
		}
		if err != nil {
			t.Fatal(err)
		}
		form, _ := oauthtest.ParseForm(page.Body, "login-form")
		form.Values.Set("email", demo.OwnerEmail)
		form.Values.Set("password", demo.OwnerPassword)
		page, _ = b.PostForm(ts.academy()+"/login", form.Values)
		for page.Status == http.StatusFound || page.Status == http.StatusSeeOther {
			page, _ = b.Get(page.URL.ResolveReference(mustURL(page.Header.Get("Location"))).String())
		}
		for _, want := range []string{"consent-form", host, "127.0.0.1:53682", "Unreviewed application", "Docs Agent"} {
			if !strings.Contains(page.Body, want) {
				t.Errorf("consent page lacks %q", want)
			}
		}
	})
	if _, err := ts.app.Platform.AllowCIMDHost(ctx, host, demo.AcademySlug, true); err != nil {
		t.Fatal(err)
	}
	ts.srv.Auth().InvalidateCIMD()
	t.Run("a reviewed host's client may", func(t *testing.T) {
		f := newFlow(t, ts, ts.academy(), doc.URL+"/good.json", "openid", "courses:write")
		tok, err := f.exchange(f.authorize(demo.OwnerEmail, demo.OwnerPassword))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(decodeJWTClaims(t, tok.AccessToken)["scope"].(string), "courses:write") {
			t.Fatal("the reviewed client did not get courses:write")
		}
	})
}
