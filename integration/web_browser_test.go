package integration

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"golang.org/x/oauth2"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/vocab"
)

// webChromium is where the browser tests expect Chromium (the Debian
// package; CI installs it).
const webChromium = "/usr/bin/chromium"

// The admin area and the account pages as a person uses them, in headless
// Chromium: the owner toggles the beta and creates an application, the
// student connects it through the real sign-in and consent pages and then
// revokes it, and a lecturer is kept out of the settings. Screenshots of
// the pages (desktop and a 390×844 phone) are written for people to look
// at.
func TestWebBrowser(t *testing.T) {
	requireChromium(t)
	ts := startServer(t, backend{name: "embedded"}, nil)
	shots := webScreenshotDir(t)

	// The application under test is the client: its redirect URI is this
	// loopback server.
	cb, _ := appCallback(t, "Study Buddy", "Back in Study Buddy")

	browser := startChromium(t, chromedp.Flag("force-color-profile", "srgb"))

	academy := ts.academy()
	var clientID, secret string
	owner := webNewTab(t, browser, shots)

	t.Run("owner toggles the beta and creates an application", func(t *testing.T) {
		owner.t = t
		resp := owner.navigate(academy + "/admin")
		if loc := owner.location(); !strings.HasPrefix(loc, academy+"/login?return_to=%2Fadmin") || resp.Status != http.StatusOK {
			t.Fatalf("/admin without a session ended at %s (%d), want the sign-in page", loc, resp.Status)
		}
		owner.signIn(demo.OwnerEmail, demo.OwnerPassword)
		owner.waitVisible("#activity-heading")
		if !owner.exists("#nav-developers") {
			t.Fatal("Developers is not in the menu although the demo beta is on")
		}
		owner.screenshot("admin-dashboard", false)
		owner.screenshot("admin-dashboard", true)

		owner.click(`nav a[href="/admin/settings"]`)
		owner.waitVisible("#beta-form")
		owner.screenshot("admin-settings", false)
		owner.submit("#beta-toggle", http.StatusOK)
		if got := owner.text("#mcp-status"); got != "Off" {
			t.Fatalf("after turning the beta off the status says %q", got)
		}
		if owner.exists("#nav-developers") {
			t.Fatal("Developers is still in the menu after turning the beta off")
		}
		if got := owner.text(".flash"); !strings.Contains(got, "MCP connections is off") {
			t.Errorf("flash message %q", got)
		}
		if resp := owner.navigate(academy + "/admin/developers/apps"); resp.Status != http.StatusNotFound || owner.text("main h1") != "Page not found" {
			t.Fatalf("Developers while the beta is off: %d %q", resp.Status, owner.text("main h1"))
		}

		owner.navigate(academy + "/admin/settings")
		owner.submit("#beta-toggle", http.StatusOK)
		if got := owner.text("#mcp-status"); got != "On" || !owner.exists("#nav-developers") {
			t.Fatalf("after turning the beta on: status %q, Developers in the menu: %v", got, owner.exists("#nav-developers"))
		}

		owner.click(`#nav-developers a[href="/admin/developers/apps"]`)
		owner.waitVisible("#new-app")
		owner.click("#new-app")
		owner.waitVisible("#app-form")
		owner.typeInto("#app-name", "Study Buddy")
		owner.typeInto("#app-redirects", "http://study-buddy.example/callback")
		owner.click("#type-confidential")
		owner.submit(`#app-form button[type="submit"]`, http.StatusBadRequest)
		// The refusal sits next to the field, and what was typed stays.
		if msg := owner.text("#app-redirects-error"); !strings.Contains(msg, "plain http is allowed only for loopback addresses") {
			t.Fatalf("the redirect URI error says %q", msg)
		}
		if owner.eval(`document.getElementById("app-redirects").getAttribute("aria-invalid")`) != "true" ||
			owner.eval(`document.getElementById("app-name").value`) != "Study Buddy" ||
			owner.eval(`document.getElementById("type-confidential").checked`) != true {
			t.Fatal("the refused form lost its input or does not mark the field")
		}
		owner.screenshot("admin-new-application-error", false)
		owner.screenshot("admin-new-application-error", true)
		owner.eval(`document.getElementById("app-redirects").value = ""`)
		owner.typeInto("#app-redirects", "http://127.0.0.1/callback")
		owner.submit(`#app-form button[type="submit"]`, http.StatusOK)
		clientID = owner.text("#client-id")
		secret = owner.text("#client-secret")
		if !strings.HasPrefix(clientID, "lct_") || !strings.HasPrefix(secret, "lcs_") {
			t.Fatalf("the page shows client ID %q and secret %q", clientID, secret)
		}
		if owner.eval(`document.querySelector('button[data-copy="client-id"]').hidden`) != false {
			t.Error("the copy button stayed hidden: /static/copy.js did not run")
		}
		owner.screenshot("admin-oauth-application-created", false)
		owner.screenshot("admin-oauth-application-created", true)

		owner.navigate(academy + "/admin/developers/apps")
		if !strings.Contains(owner.text("#apps-table"), clientID) {
			t.Fatal("the new application is not in the list")
		}
		owner.screenshot("admin-oauth-applications", false)
		owner.screenshot("admin-oauth-applications", true)
	})
	if clientID == "" {
		t.Fatal("no application; the remaining scenarios need it")
	}

	var accessToken string
	t.Run("student authorizes the application", func(t *testing.T) {
		student := webNewTab(t, browser, shots)
		conf := &oauth2.Config{
			ClientID: clientID, ClientSecret: secret, RedirectURL: cb.URL + "/callback",
			Scopes: webMemberScopes,
			Endpoint: oauth2.Endpoint{
				AuthURL: academy + vocab.AuthorizePath, TokenURL: academy + vocab.TokenPath, AuthStyle: oauth2.AuthStyleInParams,
			},
		}
		verifier, state := oauth2.GenerateVerifier(), randomB64()
		student.navigate(conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", academy)))
		student.waitVisible("#login-form")
		if !strings.Contains(student.text("main"), "Sign in to continue to Study Buddy") {
			t.Errorf("the sign-in page does not name the application: %q", student.text("main"))
		}
		student.screenshot("login", false)
		student.screenshot("login", true)
		student.signIn(demo.StudentEmail, demo.StudentPassword)
		student.waitVisible("#consent-form")
		consent := student.text("main")
		for _, want := range []string{"Study Buddy", "View your enrollments, progress, purchases and notifications", "127.0.0.1"} {
			if !strings.Contains(consent, want) {
				t.Errorf("the consent page lacks %q:\n%s", want, consent)
			}
		}
		student.screenshot("consent", false)
		student.screenshot("consent", true)
		student.submit(`#consent-form button[value="approve"]`, http.StatusOK)
		student.waitVisible("#callback-done")
		back, err := url.Parse(student.location())
		if err != nil {
			t.Fatal(err)
		}
		q := back.Query()
		if q.Get("state") != state || q.Get("iss") != academy || q.Get("code") == "" {
			t.Fatalf("the browser came back to %s", back)
		}
		ctx := context.WithValue(context.Background(), oauth2.HTTPClient, ts.client)
		tok, err := conf.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", academy))
		if err != nil {
			t.Fatalf("exchanging the code: %v", err)
		}
		accessToken = tok.AccessToken
		code, _, info := ts.bearerGet(t, academy+vocab.UserInfoPath, accessToken)
		if code != http.StatusOK || info["email"] != demo.StudentEmail {
			t.Fatalf("userinfo with the new token: %d %v", code, info)
		}
		if code, body := webGraphQL(t, ts, accessToken); code != http.StatusOK || !strings.Contains(body, `"email":"`+demo.StudentEmail+`"`) {
			t.Fatalf("/member/graphql with the new token: %d %s; want the viewer's e-mail", code, body)
		}
		if code, body := webMCPCall(t, ts, accessToken); code != http.StatusOK || !strings.Contains(body, "go-fundamentals") {
			t.Fatalf("/mcp my_enrollments with the new token: %d %s", code, body)
		}

		// The connections page lists it in plain words; revoking it stops
		// the token at once.
		student.navigate(academy + "/account/connections")
		entry := student.text(fmt.Sprintf(`[data-client-id="%s"]`, clientID))
		for _, want := range []string{"Study Buddy", "View your enrollments, progress, purchases and notifications", "See your e-mail address", "Last used just now"} {
			if !strings.Contains(entry, want) {
				t.Errorf("the connection lacks %q: %q", want, entry)
			}
		}
		student.screenshot("account-connections", false)
		student.screenshot("account-connections", true)

		// The account page shows the generated avatar; a picture chosen
		// in the file input and submitted (the browser posts the form with
		// its CSRF token, Origin: null and Sec-Fetch-Site: same-origin)
		// replaces it.
		student.navigate(academy + "/account")
		if w := student.eval(`document.querySelector("#current-picture").naturalWidth`); w != 128.0 {
			t.Errorf("the generated avatar shows %v pixels wide; want 128", w)
		}
		pic := filepath.Join(t.TempDir(), "me.png")
		if err := os.WriteFile(pic, pictureImage(t, 300, 200), 0o600); err != nil {
			t.Fatal(err)
		}
		upCtx, upCancel := student.step()
		if err := chromedp.Do(upCtx, chromedp.SetUploadFiles("#picture", []string{pic})); err != nil {
			student.fail("choose a picture", err)
		}
		upCancel()
		student.submit(`#picture-form button[type="submit"]`, http.StatusOK)
		src, _ := student.eval(`document.querySelector("#current-picture").getAttribute("src")`).(string)
		if !strings.HasPrefix(src, academy+"/avatars/usr_") || !strings.HasSuffix(src, ".png") || student.eval(`document.querySelector("#current-picture").naturalWidth`) != 200.0 {
			t.Errorf("after the upload the page shows %q; want the uploaded picture, 200 px square", src)
		}
		student.screenshot("account", false)
		student.screenshot("account", true)
		student.navigate(academy + "/account/connections")

		// The owner sees the connection among the site's.
		owner.t = t
		owner.navigate(academy + "/admin/developers/connections")
		row := owner.text("#grants-table")
		for _, want := range []string{"Study Buddy", demo.StudentEmail, "account:read"} {
			if !strings.Contains(row, want) {
				t.Errorf("the owner's connected apps lack %q: %q", want, row)
			}
		}
		owner.screenshot("admin-connected-apps", false)
		owner.screenshot("admin-connected-apps", true)

		t.Run("student revokes it", func(t *testing.T) {
			student.t = t
			student.click(`a[aria-label="Revoke access of Study Buddy"]`)
			student.waitVisible("#confirm-form")
			student.screenshot("account-revoke-confirm", true)
			student.submit(`#confirm-form button[type="submit"]`, http.StatusOK)
			if got := student.text(".flash"); !strings.Contains(got, "Study Buddy's access was revoked") {
				t.Errorf("flash message %q", got)
			}
			if student.exists(fmt.Sprintf(`[data-client-id="%s"]`, clientID)) {
				t.Fatal("the revoked application is still listed")
			}
			if code := webUserinfoStatus(t, ts, accessToken); code != http.StatusUnauthorized {
				t.Fatalf("userinfo after revoking: %d, want 401", code)
			}
			if code, body := webGraphQL(t, ts, accessToken); code != http.StatusUnauthorized {
				t.Fatalf("/member/graphql after revoking: %d %s, want 401", code, body)
			}
			if code, body := webMCPCall(t, ts, accessToken); code != http.StatusUnauthorized {
				t.Fatalf("/mcp after revoking: %d %s, want 401", code, body)
			}
		})
	})

	t.Run("owner reads the audit log", func(t *testing.T) {
		owner.t = t
		owner.navigate(academy + "/admin/audit")
		log := owner.text("main table")
		for _, want := range []string{"site.beta_changed", "client.created", "grant.revoked", "consent.granted"} {
			if !strings.Contains(log, want) {
				t.Errorf("the audit log lacks %s", want)
			}
		}
		owner.screenshot("admin-audit-log", false)
		owner.screenshot("admin-audit-log", true)
	})

	t.Run("lecturer cannot reach beta settings", func(t *testing.T) {
		lecturer := webNewTab(t, browser, shots)
		lecturer.navigate(academy + "/admin")
		lecturer.signIn(demo.LecturerEmail, demo.LecturerPassword)
		lecturer.waitVisible(".area-nav")
		if lecturer.exists(`nav a[href="/admin/settings"]`) || lecturer.exists("#nav-developers") {
			t.Error("the lecturer's menu offers settings or Developers")
		}
		resp := lecturer.navigate(academy + "/admin/settings")
		if resp.Status != http.StatusForbidden || lecturer.text("main h1") != "Not allowed" || !strings.Contains(lecturer.text("main"), "Only owners and admins") {
			t.Fatalf("a lecturer at /admin/settings: %d %q", resp.Status, lecturer.text("main"))
		}
		if lecturer.exists("#beta-form") {
			t.Fatal("the lecturer sees the beta form")
		}
		lecturer.screenshot("admin-forbidden", true)
	})
}

// webScreenshotDir is LECTERN_SCREENSHOTS_DIR, or test-artifacts/screenshots
// at the repository root (ignored by git).
func webScreenshotDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("LECTERN_SCREENSHOTS_DIR")
	if dir == "" {
		root, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
				break
			}
			parent := filepath.Dir(root)
			if parent == root {
				t.Fatal("no go.mod above the working directory")
			}
			root = parent
		}
		dir = filepath.Join(root, "test-artifacts", "screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// webTab is one person's tab in a browser context of its own (own cookies).
type webTab struct {
	t     *testing.T
	ctx   context.Context
	shots string
}

func webNewTab(t *testing.T, browser context.Context, shots string) *webTab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	// The first Run opens the tab; it must not carry a timeout.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	return &webTab{t: t, ctx: ctx, shots: shots}
}

// webStep bounds one browser step.
const webStep = 20 * time.Second

func (b *webTab) fail(what string, err error) {
	b.t.Helper()
	loc, _ := chromedp.Run(b.quick(), chromedp.Location())
	b.t.Fatalf("%s: %v (at %s)", what, err, loc)
}

func (b *webTab) quick() context.Context {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	b.t.Cleanup(cancel)
	return ctx
}

func (b *webTab) step() (context.Context, context.CancelFunc) {
	return context.WithTimeout(b.ctx, webStep)
}

// navigate loads u and returns the response of the final document.
func (b *webTab) navigate(u string) *network.Response {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(u))
	if err != nil {
		b.fail("navigate to "+u, err)
	}
	return resp
}

// submit clicks a submit button and waits for the page it leads to,
// failing unless that page has status want.
func (b *webTab) submit(sel string, want int64) {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(sel)))
	if err != nil {
		b.fail("submit "+sel, err)
	}
	if resp.Status != want {
		b.t.Fatalf("submitting %s led to %s with status %d, want %d\n%s", sel, resp.URL, resp.Status, want, b.text("main"))
	}
}

// click clicks a link (and waits for the page it leads to) or a control.
func (b *webTab) click(sel string) {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	isLink, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(`document.querySelector(%q)?.tagName === "A"`, sel)))
	if err != nil {
		b.fail("find "+sel, err)
	}
	if isLink {
		if _, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
			b.fail("follow "+sel, err)
		}
		return
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
		b.fail("click "+sel, err)
	}
}

func (b *webTab) typeInto(sel, text string) {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(sel), text)); err != nil {
		b.fail("type into "+sel, err)
	}
}

func (b *webTab) waitVisible(sel string) {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(sel))); err != nil {
		b.fail("wait for "+sel, err)
	}
}

// text is the visible text of the first element matching sel.
func (b *webTab) text(sel string) string {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.fail("read "+sel, err)
	}
	return strings.TrimSpace(s)
}

func (b *webTab) exists(sel string) bool {
	b.t.Helper()
	return b.eval(fmt.Sprintf(`document.querySelector(%q) !== null`, sel)) == true
}

func (b *webTab) eval(js string) any {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[any](js))
	if err != nil {
		b.fail("evaluate "+js, err)
	}
	return v
}

func (b *webTab) location() string {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		b.fail("location", err)
	}
	return loc
}

// signIn fills the sign-in form on the current page.
func (b *webTab) signIn(email, password string) {
	b.t.Helper()
	b.waitVisible("#login-form")
	b.typeInto("#email", email)
	b.typeInto("#password", password)
	b.submit(`#login-form button[type="submit"]`, http.StatusOK)
}

// screenshot writes the whole page as <name>-desktop.png (1280 wide) or
// <name>-phone.png (390×844, a phone in portrait). On the phone it also
// fails the test if the page scrolls sideways.
func (b *webTab) screenshot(name string, phone bool) {
	b.t.Helper()
	ctx, cancel := b.step()
	defer cancel()
	suffix := "desktop"
	viewport := chromedp.EmulateViewport(1280, 900)
	if phone {
		suffix = "phone"
		viewport = chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile, chromedp.EmulateTouch, chromedp.EmulatePortrait)
	}
	if err := chromedp.Do(ctx, viewport); err != nil {
		b.fail("set the viewport", err)
	}
	if phone {
		if wide := b.eval(`document.documentElement.scrollWidth > window.innerWidth + 1`); wide == true {
			w := b.eval(`[document.documentElement.scrollWidth, window.innerWidth, [...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > window.innerWidth + 1).slice(0, 5).map(e => e.tagName + "." + e.className + "#" + e.id)]`)
			b.t.Errorf("%s scrolls sideways on a 390 px phone: %v", name, w)
		}
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.fail("screenshot", err)
	}
	file := filepath.Join(b.shots, name+"-"+suffix+".png")
	if err := os.WriteFile(file, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", file)
	if phone {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil && !errors.Is(err, context.Canceled) {
			b.fail("reset the viewport", err)
		}
	}
}
