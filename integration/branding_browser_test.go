package integration

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"golang.org/x/oauth2"

	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/vocab"
)

// A person whose browser asks for German signs in and allows an
// application in headless Chromium: the sign-in and consent pages are
// German (<html lang="de">, the scope wording too), the flow completes and
// the code is exchanged by a real client. The two demo sites' sign-in
// pages, in their distinct themes, are photographed (set
// LECTERN_DOCS_SCREENSHOTS to a directory, such as docs/, to write them
// there too).
func TestSignInThroughGermanPageInChromium(t *testing.T) {
	requireChromium(t)
	ts := startServer(t, backend{name: "embedded"}, nil)
	shots := webScreenshotDir(t)

	callback := make(chan url.Values, 1)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case callback <- r.URL.Query():
		default:
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, `<!doctype html><title>App</title><h1 id="callback-done">Zurück in der App</h1>`)
	}))
	t.Cleanup(cb.Close)

	browser := startChromium(t, chromedp.Flag("force-color-profile", "srgb"))

	t.Run("German sign-in and consent", func(t *testing.T) {
		tab := webNewTab(t, browser, shots)
		ctx, cancel := context.WithTimeout(tab.ctx, webStep)
		defer cancel()
		if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{
			Headers: network.Headers{"Accept-Language": "de-DE,de;q=0.9,en;q=0.3"}}); err != nil {
			t.Fatal(err)
		}
		academy := ts.academy()
		conf := &oauth2.Config{
			ClientID: demo.MemberClientID, RedirectURL: cb.URL + "/callback",
			Scopes:   scope.MemberDefault(),
			Endpoint: oauth2.Endpoint{AuthURL: academy + vocab.AuthorizePath, TokenURL: academy + vocab.TokenPath, AuthStyle: oauth2.AuthStyleInParams},
		}
		verifier, state := oauth2.GenerateVerifier(), randomB64()
		tab.navigate(conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", academy)))
		tab.waitVisible("#login-form")
		if lang := tab.eval(`document.documentElement.lang`); lang != "de" {
			t.Fatalf("the sign-in page has lang %v; want de", lang)
		}
		if got := tab.text(`#login-form button[type="submit"]`); got != "Anmelden" {
			t.Errorf("the sign-in button says %q; want Anmelden", got)
		}
		if lead := tab.text("main .lead"); lead != "Melden Sie sich an, um mit Demo Member App fortzufahren." {
			t.Errorf("the sign-in lead says %q", lead)
		}
		if label := tab.text(`label[for="email"]`); label != "E-Mail-Adresse" {
			t.Errorf("the e-mail label says %q", label)
		}
		tab.screenshot("signin-german", false)
		tab.signIn(demo.StudentEmail, demo.StudentPassword)
		tab.waitVisible("#consent-form")
		if lang := tab.eval(`document.documentElement.lang`); lang != "de" {
			t.Fatalf("the consent page has lang %v; want de", lang)
		}
		main := tab.text("main")
		for _, want := range []string{"Demo Member App erlauben?", "möchte auf Ihr Konto bei", "Ihre Einschreibungen, Fortschritte, Käufe und Benachrichtigungen ansehen", "Erlauben", "Ablehnen"} {
			if !strings.Contains(main, want) {
				t.Errorf("the German consent page lacks %q:\n%s", want, main)
			}
		}
		tab.screenshot("consent-german", false)
		tab.submit(`#consent-form button[value="approve"]`, http.StatusOK)
		var q url.Values
		select {
		case q = <-callback:
		case <-time.After(webStep):
			t.Fatal("the application was never called back")
		}
		if q.Get("state") != state || q.Get("code") == "" {
			t.Fatalf("callback %v", q)
		}
		xctx := context.WithValue(context.Background(), oauth2.HTTPClient, loopbackClient(ts.addr))
		tok, err := conf.Exchange(xctx, q.Get("code"), oauth2.VerifierOption(verifier), oauth2.SetAuthURLParam("resource", academy))
		if err != nil || tok.AccessToken == "" {
			t.Fatalf("exchanging the code: %v", err)
		}
	})

	t.Run("the demo sites' sign-in pages", func(t *testing.T) {
		docs := os.Getenv("LECTERN_DOCS_SCREENSHOTS")
		for _, s := range []struct{ name, origin, primary string }{
			{"academy", ts.academy(), demo.Appearance(demo.AcademySlug).PrimaryColor},
			{"open-school", ts.open(), demo.Appearance(demo.OpenSlug).PrimaryColor},
		} {
			tab := webNewTab(t, browser, shots)
			tab.navigate(s.origin + "/login")
			tab.waitVisible("#login-form")
			// The site's theme is applied: the sign-in button is its
			// primary colour.
			got := tab.eval(`getComputedStyle(document.querySelector('#login-form button.primary')).backgroundColor`)
			if want := cssRGB(s.primary); got != want {
				t.Errorf("%s: the sign-in button is %v; want the site's primary %s (%s)", s.name, got, s.primary, want)
			}
			tab.screenshot("branding-"+s.name+"-signin", false)
			if docs != "" {
				ctx, cancel := context.WithTimeout(tab.ctx, webStep)
				err := chromedp.Do(ctx, chromedp.EmulateViewport(1000, 720))
				var png []byte
				if err == nil {
					png, err = chromedp.Run(ctx, chromedp.CaptureScreenshot())
				}
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(docs, "branding-"+s.name+"-signin.png"), png, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

// cssRGB is #rrggbb as getComputedStyle writes it: rgb(r, g, b).
func cssRGB(hex string) string {
	var r, g, b uint8
	if _, err := fmt.Sscanf(hex, "#%02x%02x%02x", &r, &g, &b); err != nil {
		return "invalid " + hex
	}
	return fmt.Sprintf("rgb(%d, %d, %d)", r, g, b)
}
