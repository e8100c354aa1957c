package integration

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/internal/oauthtest"
)

// pictureClaims runs the code flow for email at origin with the demo member
// client and returns the verified id_token's claims (go-oidc) and
// UserInfo's, having checked that they carry the same picture.
func pictureClaims(t *testing.T, ts *testServer, origin, email, password string, scopes ...string) (idClaims, info map[string]any) {
	t.Helper()
	if len(scopes) == 0 {
		scopes = []string{"openid", "profile", "email"}
	}
	f := newFlow(t, ts, origin, demo.MemberClientID, scopes...)
	tok, err := f.exchange(f.authorize(email, password))
	if err != nil {
		t.Fatalf("exchange: %v", err)
	}
	rawID, _ := tok.Extra("id_token").(string)
	provider, err := oidc.NewProvider(oidc.ClientContext(f.ctx, ts.client), origin)
	if err != nil {
		t.Fatal(err)
	}
	idt, err := provider.Verifier(&oidc.Config{ClientID: demo.MemberClientID, SupportedSigningAlgs: []string{"ES256"}}).
		Verify(oidc.ClientContext(f.ctx, ts.client), rawID)
	if err != nil {
		t.Fatalf("go-oidc: %v", err)
	}
	if err := idt.Claims(&idClaims); err != nil {
		t.Fatal(err)
	}
	status, _, info := f.userinfo(tok.AccessToken)
	if status != http.StatusOK {
		t.Fatalf("userinfo: %d %v", status, info)
	}
	if idClaims["picture"] != info["picture"] {
		t.Fatalf("picture: id_token %v, userinfo %v", idClaims["picture"], info["picture"])
	}
	return idClaims, info
}

// picturePath returns the path of a picture URL at origin.
func picturePath(t *testing.T, origin string, claim any) string {
	t.Helper()
	s, _ := claim.(string)
	path, ok := strings.CutPrefix(s, origin)
	if !ok || !strings.HasPrefix(path, "/avatars/") {
		t.Fatalf("picture %q is not an avatar of %s", claim, origin)
	}
	return path
}

// With scope profile, everyone has a picture: without an upload, the
// avatar the site generates, at the origin of the site that issued the
// claim. It loads as a cacheable, script-free SVG showing the initials; a
// site answers only for people with a role there.
func TestPictureClaimIsTheGeneratedAvatar(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		id, info := pictureClaims(t, ts, ts.academy(), demo.StudentEmail, demo.StudentPassword)
		sub, _ := id["sub"].(string)
		if want := ts.academy() + "/avatars/" + sub + ".svg"; id["picture"] != want {
			t.Fatalf("picture %v; want %s", id["picture"], want)
		}
		if info["name"] != "Sam Student" {
			t.Fatalf("userinfo %v", info)
		}
		status, hdr, body := ts.get(t, ts.academy(), picturePath(t, ts.academy(), id["picture"]))
		if status != 200 || hdr.Get("Content-Type") != "image/svg+xml" || hdr.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("avatar: %d %v", status, hdr)
		}
		if csp := hdr.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "sandbox") {
			t.Errorf("avatar CSP %q; want scripts forbidden", csp)
		}
		if !strings.HasPrefix(hdr.Get("Cache-Control"), "public, max-age=") || hdr.Get("ETag") == "" {
			t.Errorf("avatar caching: %q %q", hdr.Get("Cache-Control"), hdr.Get("ETag"))
		}
		svg := string(body)
		if !strings.HasPrefix(svg, "<svg") || !strings.Contains(svg, ">SS</text>") || strings.Contains(svg, "Sam") || strings.Contains(svg, demo.StudentEmail) || strings.Contains(svg, "<script") {
			t.Errorf("avatar: %s", svg)
		}
		if status, _, body := ts.get(t, ts.academy(), picturePath(t, ts.academy(), id["picture"]), "If-None-Match", hdr.Get("ETag")); status != http.StatusNotModified || len(body) != 0 {
			t.Errorf("revalidation: %d %q; want 304", status, body)
		}

		// Open School issues its own address for the same person.
		openID, _ := pictureClaims(t, ts, ts.open(), demo.StudentEmail, demo.StudentPassword)
		if want := ts.open() + "/avatars/" + sub + ".svg"; openID["picture"] != want {
			t.Errorf("picture at Open School %v; want %s", openID["picture"], want)
		}
		if status, _, _ := ts.get(t, ts.open(), "/avatars/"+sub+".svg"); status != 200 {
			t.Errorf("the student's avatar at Open School: %d", status)
		}

		// No role at the site, or no such person: 404 alike.
		lecturer := gqlUser(t, ts, demo.LecturerEmail).ID
		outsider := gqlUser(t, ts, demo.OutsiderEmail).ID
		for _, tc := range []struct{ origin, path string }{
			{ts.open(), "/avatars/" + lecturer + ".svg"}, // a lecturer at Academy only
			{ts.academy(), "/avatars/" + outsider + ".svg"},
			{ts.academy(), "/avatars/usr_nobody.svg"},
			{ts.academy(), "/avatars/" + sub},          // no extension
			{ts.academy(), "/avatars/" + sub + ".png"}, // not the generated one
			{ts.academy(), "/avatars/..%2f" + sub + ".svg"},
			{ts.academy(), "/avatars/" + sub + "/" + strings.Repeat("a", 32) + ".png"}, // no upload
		} {
			if status, hdr, _ := ts.get(t, tc.origin, tc.path); status != http.StatusNotFound || hdr.Get("ETag") != "" {
				t.Errorf("%s%s: %d; want 404", tc.origin, tc.path, status)
			}
		}
		if status, _, _ := ts.get(t, ts.academy(), "/avatars/"+lecturer+".svg"); status != 200 {
			t.Errorf("the lecturer's avatar at Academy: %d", status)
		}

		// Without profile: no name, no picture.
		_, info = pictureClaims(t, ts, ts.academy(), demo.StudentEmail, demo.StudentPassword, "openid", "email")
		if _, ok := info["picture"]; ok {
			t.Errorf("picture without scope profile: %v", info)
		}
	})
}

// pictureImage is a w×h PNG.
func pictureImage(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x * 3), 90, uint8(y * 3), 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pictureUpload posts a file to the account page's picture form, as a
// browser would, with hdr (name, value pairs) added.
func pictureUpload(t *testing.T, p *webPerson, csrf, contentType string, data []byte, hdr ...string) *oauthtest.Page {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if csrf != "" {
		_ = mw.WriteField("csrf_token", csrf)
	}
	part := textproto.MIMEHeader{}
	part.Set("Content-Disposition", `form-data; name="picture"; filename="me"`)
	part.Set("Content-Type", contentType)
	w, err := mw.CreatePart(part)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.Write(data)
	_ = mw.Close()
	req, err := http.NewRequest(http.MethodPost, p.origin+"/account/picture", &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := p.b.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out bytes.Buffer
	_, _ = out.ReadFrom(resp.Body)
	return &oauthtest.Page{URL: req.URL, Status: resp.StatusCode, Header: resp.Header, Body: out.String()}
}

// A member uploads a picture on /account: from then on the picture claim
// (id_token and UserInfo alike, also for tokens issued before) is the
// uploaded picture, served redrawn as PNG at every site where the member
// has a role; a new upload replaces it, and removing it brings the
// generated avatar back.
func TestPictureUploadOnTheAccountPage(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		p := webSignIn(t, ts, ts.academy(), demo.StudentEmail, demo.StudentPassword)
		page := p.expect("/account", http.StatusOK)
		if !webHasID(t, page.Body, "picture-form") || !webHasID(t, page.Body, "current-picture") {
			t.Fatalf("the account page has no picture form:\n%s", webExcerpt(page.Body))
		}
		before := newFlow(t, ts, ts.academy(), demo.MemberClientID, "openid", "profile")
		earlier, err := before.exchange(before.authorize(demo.StudentEmail, demo.StudentPassword))
		if err != nil {
			t.Fatal(err)
		}

		// Text after the image's end and a comment chunk are not kept.
		upload := append(pictureWithText(t, pictureImage(t, 80, 60), "secret-metadata"), []byte("<script>alert(1)</script>")...)
		res := pictureUpload(t, p, p.csrf(), "image/png", upload)
		if res.Status != http.StatusSeeOther || res.Header.Get("Location") != "/account" {
			t.Fatalf("upload: %d %s\n%s", res.Status, res.Header.Get("Location"), webExcerpt(res.Body))
		}
		id, _ := pictureClaims(t, ts, ts.academy(), demo.StudentEmail, demo.StudentPassword)
		sub, _ := id["sub"].(string)
		path := picturePath(t, ts.academy(), id["picture"])
		if !strings.HasPrefix(path, "/avatars/"+sub+"/") || !strings.HasSuffix(path, ".png") {
			t.Fatalf("picture after the upload: %v", id["picture"])
		}
		if _, _, info := before.userinfo(earlier.AccessToken); info["picture"] != id["picture"] {
			t.Errorf("UserInfo with a token from before the upload: %v; want the new picture at once", info["picture"])
		}
		for _, origin := range []string{ts.academy(), ts.open()} {
			status, hdr, body := ts.get(t, origin, path)
			if status != 200 || hdr.Get("Content-Type") != "image/png" || hdr.Get("X-Content-Type-Options") != "nosniff" ||
				!strings.Contains(hdr.Get("Content-Security-Policy"), "default-src 'none'") || !strings.Contains(hdr.Get("Cache-Control"), "immutable") {
				t.Fatalf("%s%s: %d %v", origin, path, status, hdr)
			}
			cfg, err := png.DecodeConfig(bytes.NewReader(body))
			if err != nil || cfg.Width != 60 || cfg.Height != 60 {
				t.Errorf("served picture %dx%d, %v; want the middle 60×60 square", cfg.Width, cfg.Height, err)
			}
			if bytes.Contains(body, []byte("secret-metadata")) || bytes.Contains(body, []byte("<script")) {
				t.Error("the served picture carries what rode along in the upload")
			}
		}
		openID, _ := pictureClaims(t, ts, ts.open(), demo.StudentEmail, demo.StudentPassword)
		if openID["picture"] != ts.open()+path {
			t.Errorf("picture at Open School %v; want %s", openID["picture"], ts.open()+path)
		}
		page = p.expect("/account", http.StatusOK)
		if !strings.Contains(page.Body, `src="`+ts.academy()+path+`"`) || !webHasID(t, page.Body, "picture-remove-form") {
			t.Errorf("the account page does not show the new picture:\n%s", webExcerpt(page.Body))
		}

		// A second upload replaces the first, whose address goes.
		if res := pictureUpload(t, p, p.csrf(), "image/png", pictureImage(t, 20, 20)); res.Status != http.StatusSeeOther {
			t.Fatalf("second upload: %d", res.Status)
		}
		if status, _, _ := ts.get(t, ts.academy(), path); status != http.StatusNotFound {
			t.Errorf("the replaced picture: %d; want 404", status)
		}
		id, _ = pictureClaims(t, ts, ts.academy(), demo.StudentEmail, demo.StudentPassword)
		if status, _, _ := ts.get(t, ts.academy(), picturePath(t, ts.academy(), id["picture"])); status != 200 {
			t.Errorf("the new picture: %d", status)
		}

		// Removing it brings back the generated avatar.
		if res := p.expectPost("/account/picture/remove", url.Values{"csrf_token": {p.csrf()}}, http.StatusSeeOther); res.Header.Get("Location") != "/account" {
			t.Errorf("remove: %s", res.Header.Get("Location"))
		}
		id, _ = pictureClaims(t, ts, ts.academy(), demo.StudentEmail, demo.StudentPassword)
		if id["picture"] != ts.academy()+"/avatars/"+sub+".svg" {
			t.Errorf("picture after removing it: %v", id["picture"])
		}
		if actions := webAuditActions(t, ts); !strings.Contains(strings.Join(actions, " "), "account.picture_changed") {
			t.Errorf("audit actions %v", actions)
		}
	})
}

// pictureWithText inserts a tEXt chunk after a PNG's header chunk.
func pictureWithText(t *testing.T, data []byte, text string) []byte {
	t.Helper()
	const ihdrEnd = 8 + 4 + 4 + 13 + 4
	typed := append([]byte("tEXt"), "Comment\x00"+text...)
	chunk := binary.BigEndian.AppendUint32(nil, uint32(len(typed)-4))
	chunk = append(chunk, typed...)
	chunk = binary.BigEndian.AppendUint32(chunk, crc32.ChecksumIEEE(typed))
	out := append(append([]byte{}, data[:ihdrEnd]...), chunk...)
	return append(out, data[ihdrEnd:]...)
}

// What the picture form refuses changes nothing: files that are not a
// PNG, JPEG or WebP of their declared type (SVG, HTML, polyglots), files
// over 2 MiB, and forms without the session's CSRF token or from another
// origin.
func TestPictureUploadRefusals(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	p := webSignIn(t, ts, ts.academy(), demo.StudentEmail, demo.StudentPassword)
	sub := gqlUser(t, ts, demo.StudentEmail).ID
	good := pictureImage(t, 16, 16)
	svg := []byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script></svg>`)
	html := []byte(`<!DOCTYPE html><html><body><script>alert(1)</script></body></html>`)
	polyglot := append([]byte("GIF89a/*"), []byte(`*/=1;alert(1)//<script>alert(2)</script>`)...)
	tests := []struct {
		name, contentType string
		data              []byte
		csrf              string
		hdr               []string
		status            int
	}{
		{"svg", "image/svg+xml", svg, "ok", nil, http.StatusUnsupportedMediaType},
		{"svg declared png", "image/png", svg, "ok", nil, http.StatusUnsupportedMediaType},
		{"html declared jpeg", "image/jpeg", html, "ok", nil, http.StatusUnsupportedMediaType},
		{"gif/javascript polyglot declared png", "image/png", polyglot, "ok", nil, http.StatusUnsupportedMediaType},
		{"png signature with html", "image/png", append([]byte("\x89PNG\r\n\x1a\n"), html...), "ok", nil, http.StatusUnprocessableEntity},
		{"over 2 MiB", "image/png", append(append([]byte{}, good...), make([]byte, 2<<20)...), "ok", nil, http.StatusRequestEntityTooLarge},
		{"no csrf token", "image/png", good, "", nil, http.StatusForbidden},
		{"wrong csrf token", "image/png", good, "not-the-token", nil, http.StatusForbidden},
		{"another origin", "image/png", good, "ok", []string{"Origin", "https://evil.example"}, http.StatusForbidden},
		{"null origin", "image/png", good, "ok", []string{"Origin", "null"}, http.StatusForbidden},
		{"cross-site fetch", "image/png", good, "ok", []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			csrf := tc.csrf
			if csrf == "ok" {
				csrf = p.csrf()
			}
			res := pictureUpload(t, p, csrf, tc.contentType, tc.data, tc.hdr...)
			if res.Status != tc.status {
				t.Fatalf("%d; want %d\n%s", res.Status, tc.status, webExcerpt(res.Body))
			}
			if strings.Contains(res.Body, "<script>alert") {
				t.Error("the refusal page echoes the upload")
			}
			if u := gqlUser(t, ts, demo.StudentEmail); u.PictureFile != "" {
				t.Fatalf("the picture changed to %q", u.PictureFile)
			}
		})
	}
	// The same form from the site's own page is accepted; with the pages'
	// Referrer-Policy no-referrer, browsers send Origin: null beside
	// Sec-Fetch-Site: same-origin.
	if res := pictureUpload(t, p, p.csrf(), "image/png", good, "Origin", "null", "Sec-Fetch-Site", "same-origin"); res.Status != http.StatusSeeOther {
		t.Fatalf("same-origin upload: %d\n%s", res.Status, webExcerpt(res.Body))
	}
	if u := gqlUser(t, ts, demo.StudentEmail); u.PictureFile == "" || u.ID != sub {
		t.Fatal("the accepted upload did not change the picture")
	}
	// A signed-out browser is sent to sign in.
	anon := webAnonymous(t, ts, ts.academy())
	if res := pictureUpload(t, anon, "x", "image/png", good); res.Status != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/login") {
		t.Errorf("signed out: %d %s", res.Status, res.Header.Get("Location"))
	}
}

// The account page shows a picture only where the site serves it: a
// person signed in at a site where they hold no role (sign-in is
// platform-wide) gets no address that answers 404, and a sentence saying
// why; a member sees the picture, and its address answers 200.
func TestAccountPagePictureOnlyWhereServed(t *testing.T) {
	ts := startServer(t, backend{name: "embedded"}, nil)
	academy := ts.academy()
	imgSrc := regexp.MustCompile(`<img[^>]*\ssrc="([^"]+)"`)
	for _, tc := range []struct {
		name, email, password string
		member                bool
	}{
		{"no role at the site", demo.OutsiderEmail, demo.OutsiderPassword, false},
		{"a student", demo.StudentEmail, demo.StudentPassword, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := webSignIn(t, ts, academy, tc.email, tc.password)
			page := p.expect("/account", http.StatusOK)
			if got := strings.Contains(page.Body, `id="current-picture"`); got != tc.member {
				t.Fatalf("current picture shown: %v, want %v\n%s", got, tc.member, webExcerpt(page.Body))
			}
			if got := strings.Contains(page.Body, `id="picture-members-only"`); got == tc.member {
				t.Fatalf("the members-only sentence shown: %v, want %v", got, !tc.member)
			}
			if !strings.Contains(page.Body, `id="picture-form"`) {
				t.Fatal("the upload form is gone: the picture belongs to the account")
			}
			for _, m := range imgSrc.FindAllStringSubmatch(page.Body, -1) {
				src := strings.ReplaceAll(m[1], "&amp;", "&")
				if !strings.HasPrefix(src, "http") {
					src = academy + src
				}
				resp, err := ts.client.Get(src)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Errorf("the page shows %s, which answers %d", src, resp.StatusCode)
				}
			}
		})
	}
}
