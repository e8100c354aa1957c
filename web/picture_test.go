package web

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"net/http"
	"os"
	"strings"
	"testing"
)

// testImage is a w×h picture with a gradient, so scaling has work to do.
func testImage(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 200, 255})
		}
	}
	return img
}

func encodePNG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeJPEG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// withPNGText inserts a tEXt chunk (metadata a camera or editor leaves)
// after the IHDR chunk of a PNG.
func withPNGText(t testing.TB, data []byte, text string) []byte {
	t.Helper()
	const ihdrEnd = 8 + 4 + 4 + 13 + 4 // signature, length, type, data, crc
	payload := []byte("Comment\x00" + text)
	chunk := binary.BigEndian.AppendUint32(nil, uint32(len(payload)))
	typed := append([]byte("tEXt"), payload...)
	chunk = append(chunk, typed...)
	chunk = binary.BigEndian.AppendUint32(chunk, crc32.ChecksumIEEE(typed))
	out := append([]byte{}, data[:ihdrEnd]...)
	out = append(out, chunk...)
	return append(out, data[ihdrEnd:]...)
}

// withJPEGComment inserts a COM segment after the SOI marker.
func withJPEGComment(data []byte, text string) []byte {
	seg := []byte{0xFF, 0xFE}
	seg = binary.BigEndian.AppendUint16(seg, uint16(len(text)+2))
	seg = append(seg, text...)
	out := append([]byte{}, data[:2]...)
	out = append(out, seg...)
	return append(out, data[2:]...)
}

// A picture is redrawn: square, at most 512 a side, never scaled up, in
// PNG (PNG, WebP) or JPEG (JPEG), and what rode along in the file (text
// chunks, comments, bytes after the image) is not in what is kept.
func TestProcessPictureRedraws(t *testing.T) {
	const secret = `<script>alert("secret-metadata")</script>`
	webpData, err := os.ReadFile("testdata/picture.webp") // 150×100, from golang.org/x/image
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, declared string
		data           []byte
		ext, mediaType string
		side           int
	}{
		{"large png with a text chunk", "image/png", withPNGText(t, encodePNG(t, testImage(1200, 800)), secret), "png", "image/png", 512},
		{"png with html after the end", "image/png", append(encodePNG(t, testImage(300, 400)), []byte(secret)...), "png", "image/png", 300},
		{"jpeg with a comment", "image/jpeg", withJPEGComment(encodeJPEG(t, testImage(640, 640)), secret), "jpg", "image/jpeg", 512},
		{"small jpeg is not scaled up", "image/jpeg; charset=binary", encodeJPEG(t, testImage(40, 60)), "jpg", "image/jpeg", 40},
		{"webp", "image/webp", webpData, "png", "image/png", 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := processPicture(t.Context(), tc.declared, tc.data)
			if err != nil {
				t.Fatal(err)
			}
			if p.ext != tc.ext {
				t.Errorf("stored as %s; want %s", p.ext, tc.ext)
			}
			if got := http.DetectContentType(p.data); got != tc.mediaType {
				t.Errorf("stored bytes are %s; want %s", got, tc.mediaType)
			}
			cfg, _, err := image.DecodeConfig(bytes.NewReader(p.data))
			if err != nil || cfg.Width != tc.side || cfg.Height != tc.side {
				t.Errorf("stored picture %dx%d (%v); want %dx%d", cfg.Width, cfg.Height, err, tc.side, tc.side)
			}
			for _, s := range []string{"secret-metadata", "<script", "Comment"} {
				if bytes.Contains(p.data, []byte(s)) {
					t.Errorf("the stored picture still holds %q", s)
				}
			}
		})
	}
}

// Anything but a PNG, JPEG or WebP that decodes as what it claims is
// refused with the status the person is shown.
func TestProcessPictureRefuses(t *testing.T) {
	pngData := encodePNG(t, testImage(20, 20))
	var gifData bytes.Buffer
	if err := gif.Encode(&gifData, testImage(20, 20), nil); err != nil {
		t.Fatal(err)
	}
	// A PNG header declaring a 100000×100000 canvas: a decompression bomb.
	bomb := append([]byte{}, pngData...)
	binary.BigEndian.PutUint32(bomb[16:], 100000)
	binary.BigEndian.PutUint32(bomb[20:], 100000)
	binary.BigEndian.PutUint32(bomb[29:], crc32.ChecksumIEEE(bomb[12:29]))
	svg := []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`)
	html := []byte(`<!DOCTYPE html><html><script>alert(1)</script></html>`)
	tests := []struct {
		name, declared string
		data           []byte
		status         int
	}{
		{"svg", "image/svg+xml", svg, http.StatusUnsupportedMediaType},
		{"svg declared png", "image/png", svg, http.StatusUnsupportedMediaType},
		{"html declared png", "image/png", html, http.StatusUnsupportedMediaType},
		{"html", "text/html", html, http.StatusUnsupportedMediaType},
		{"gif", "image/gif", gifData.Bytes(), http.StatusUnsupportedMediaType},
		{"gif declared png", "image/png", gifData.Bytes(), http.StatusUnsupportedMediaType},
		{"png declared jpeg", "image/jpeg", pngData, http.StatusUnsupportedMediaType},
		{"no type", "", pngData, http.StatusUnsupportedMediaType},
		{"png signature, then html", "image/png", append([]byte("\x89PNG\r\n\x1a\n"), html...), http.StatusUnprocessableEntity},
		{"truncated png", "image/png", pngData[:len(pngData)/2], http.StatusUnprocessableEntity},
		{"decompression bomb", "image/png", bomb, http.StatusUnprocessableEntity},
		{"empty", "image/png", nil, http.StatusBadRequest},
		{"over 2 MiB", "image/png", append(append([]byte{}, pngData...), make([]byte, MaxPictureBytes)...), http.StatusRequestEntityTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := processPicture(t.Context(), tc.declared, tc.data)
			var pe *pictureError
			if !errors.As(err, &pe) || pe.status != tc.status {
				t.Fatalf("got %v, %v; want a refusal with status %d", p, err, tc.status)
			}
			if strings.Contains(pe.msg, "<") {
				t.Errorf("the message echoes markup: %q", pe.msg)
			}
		})
	}
}

// While every decoding slot is taken, an upload waits, and gives up with
// its request.
func TestProcessPictureWaitsForASlot(t *testing.T) {
	for range cap(decodeSlots) {
		decodeSlots <- struct{}{}
	}
	defer func() {
		for range cap(decodeSlots) {
			<-decodeSlots
		}
	}()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := processPicture(ctx, "image/png", encodePNG(t, testImage(10, 10))); !errors.Is(err, context.Canceled) {
		t.Fatalf("with every slot taken and the request gone: %v; want context.Canceled", err)
	}
}

func TestPictureFileNames(t *testing.T) {
	key := newPictureKey()
	if len(key) != pictureKeyLen {
		t.Fatalf("key %q has %d characters", key, len(key))
	}
	for _, tc := range []struct {
		file, contentType string
		ok                bool
	}{
		{key + ".png", "image/png", true},
		{key + ".jpg", "image/jpeg", true},
		{key + ".svg", "", false},
		{key + ".png.html", "", false},
		{key, "", false},
		{strings.ToUpper(key) + ".png", "", false},
		{"../" + key[3:] + ".png", "", false},
		{key[:31] + ".png", "", false},
	} {
		k, ct, ok := splitPictureFile(tc.file)
		if ok != tc.ok || ct != tc.contentType || (ok && k != key) {
			t.Errorf("splitPictureFile(%q) = %q, %q, %v", tc.file, k, ct, ok)
		}
	}
}

func TestInitials(t *testing.T) {
	for name, want := range map[string]string{
		"Ada Lovelace":              "AL",
		"grace brewster hopper":     "GH",
		"Plato":                     "P",
		"  ":                        "?",
		"<script>alert(1)</script>": "SS",
		"Émile Zola":                "ÉZ",
		"李 小龍":                      "李小",
		"O'Brien, Pat":              "OP",
	} {
		if got := initials(name); got != want {
			t.Errorf("initials(%q) = %q; want %q", name, got, want)
		}
	}
}

// The generated avatar shows the initials and nothing else of the person,
// escaped, on a colour that depends on the subject alone.
func TestAvatarSVG(t *testing.T) {
	svg := string(avatarSVG("usr_a", `Ada "<b>&" Lovelace`))
	if !strings.HasPrefix(svg, `<svg xmlns="http://www.w3.org/2000/svg"`) || !strings.Contains(svg, ">AL</text>") {
		t.Fatalf("avatar: %s", svg)
	}
	for _, s := range []string{"Ada", "Lovelace", "<b>", "script", "href", "style", "<image", "@"} {
		if strings.Contains(svg, s) {
			t.Errorf("the avatar contains %q: %s", s, svg)
		}
	}
	if a, again := avatarColor("usr_a"), avatarColor("usr_a"); a != again || a == avatarColor("usr_b") {
		t.Error("the colour is not a function of the subject")
	}
	if !strings.Contains(string(avatarSVG("usr_a", "Someone Else")), avatarColor("usr_a")) {
		t.Error("the colour changed with the name")
	}
	// A name without a letter or digit shows "?".
	if got := string(avatarSVG("usr_a", "& <")); !strings.Contains(got, ">?</text>") {
		t.Errorf("a name without letters: %s", got)
	}
}

// The cost of one upload's redraw, which decodeSlots bounds per core: a
// photograph-sized JPEG and a large PNG.
func BenchmarkProcessPicture(b *testing.B) {
	for _, tc := range []struct {
		name, mediaType string
		data            []byte
	}{
		{"jpeg 3000x2000", "image/jpeg", encodeJPEG(b, testImage(3000, 2000))},
		{"png 1600x1600", "image/png", encodePNG(b, testImage(1600, 1600))},
	} {
		b.Run(tc.name, func(b *testing.B) {
			if len(tc.data) > MaxPictureBytes {
				b.Skipf("%d bytes: over the upload limit", len(tc.data))
			}
			for b.Loop() {
				if _, err := processPicture(context.Background(), tc.mediaType, tc.data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
