package server

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lectern/lectern/adminapi"
)

// onlyReader hides the length of a body, so that it goes out chunked.
type onlyReader struct{ io.Reader }

// The body limit is 1 MiB, 1,048,576 bytes, as the docs and the 413 answer
// say, whether the length is declared or the body is chunked; uploads have
// their own, adminapi.UploadBodyLimit. echo's "1M" was 1,000,000 bytes.
func TestBodyLimitIsOneMiB(t *testing.T) {
	s, hosts := benchServer(t, 1)
	// A route that reads the whole body, so that only the router's limit
	// decides.
	s.Router().POST("/test/body", func(c echo.Context) error {
		n, err := io.Copy(io.Discard, c.Request().Body)
		if err != nil {
			return err
		}
		return c.String(http.StatusOK, strconv.FormatInt(n, 10))
	})
	srv := httptest.NewTLSServer(s)
	t.Cleanup(srv.Close)
	client := srv.Client()
	// The client sends a body only once the server asks for it, so that a
	// refusal on the declared length alone comes back whole.
	client.Transport.(*http.Transport).ExpectContinueTimeout = 10 * time.Second

	post := func(path string, n int, chunked bool) (int, string) {
		t.Helper()
		var body io.Reader = bytes.NewReader(bytes.Repeat([]byte("x"), n))
		if chunked {
			body = onlyReader{body}
		}
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, body)
		req.Host = hosts[0]
		req.Header.Set("Expect", "100-continue")
		req.Header.Set("Content-Type", "application/octet-stream")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("POST %s with %d bytes: %v", path, n, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, chunked := range []bool{false, true} {
		if code, body := post("/test/body", MaxBodyBytes, chunked); code != 200 || body != "1048576" {
			t.Errorf("exactly 1 MiB (chunked %v): %d %.200s", chunked, code, body)
		}
		if code, body := post("/test/body", 1_000_001, chunked); code != 200 || body != "1000001" {
			t.Errorf("1,000,001 bytes (chunked %v): %d %.200s", chunked, code, body)
		}
		code, body := post("/test/body", MaxBodyBytes+1, chunked)
		if code != http.StatusRequestEntityTooLarge || !strings.Contains(body, "request_too_large") || !strings.Contains(body, "(1 MiB; file uploads 10 MiB)") {
			t.Errorf("1 MiB + 1 (chunked %v): %d %.200s", chunked, code, body)
		}
	}
	// Uploads: their limit, exactly; the upload is refused later for want
	// of a token, not for its size.
	files := adminapi.BasePath + "/files"
	if code, body := post(files, adminapi.UploadBodyLimit, false); code == http.StatusRequestEntityTooLarge {
		t.Errorf("an upload of exactly %d bytes: %d %.200s", adminapi.UploadBodyLimit, code, body)
	}
	if code, body := post(files, adminapi.UploadBodyLimit+1, false); code != http.StatusRequestEntityTooLarge {
		t.Errorf("an upload of %d bytes: %d %.200s", adminapi.UploadBodyLimit+1, code, body)
	}
}
