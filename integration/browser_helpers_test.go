package integration

import (
	"context"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// requireChromium skips the test when Chromium is missing, or fails it
// when LECTERN_REQUIRE_BROWSER is set.
func requireChromium(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(webChromium); err != nil {
		if v := os.Getenv("LECTERN_REQUIRE_BROWSER"); v != "" && v != "0" && !strings.EqualFold(v, "false") {
			t.Fatalf("LECTERN_REQUIRE_BROWSER is set but Chromium is not at %s: %v", webChromium, err)
		}
		t.Skipf("Chromium is not at %s (%v): skipping the browser tests; install the chromium package, or set LECTERN_REQUIRE_BROWSER=1 to make this a failure", webChromium, err)
	}
}

// startChromium starts headless Chromium with a profile and temporary
// directory of the test's own, stopped when the test ends, and returns
// its browser context.
func startChromium(t *testing.T, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	opts := append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(webChromium),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("password-store", "basic"),
		chromedp.UserDataDir(t.TempDir()),
		// Its shared-memory files (disable-dev-shm-usage) go to a
		// directory the test removes.
		chromedp.Env("TMPDIR=" + t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}, extra...)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	t.Cleanup(cancelBrowser)
	if err := chromedp.Do(browser); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return browser
}

// appCallback is the application a browser test signs in to: a loopback
// server whose page (title, and heading #callback-done) the browser lands
// on, reporting each callback's query on the channel.
func appCallback(t *testing.T, title, heading string) (*httptest.Server, <-chan url.Values) {
	t.Helper()
	hits := make(chan url.Values, 4)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case hits <- r.URL.Query():
		default:
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, "<!doctype html><title>"+html.EscapeString(title)+`</title><h1 id="callback-done">`+html.EscapeString(heading)+"</h1>")
	}))
	t.Cleanup(cb.Close)
	return cb, hits
}
