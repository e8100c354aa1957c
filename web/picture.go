package web

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base32"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"mime"
	"net/http"
	"runtime"
	"strings"

	"golang.org/x/image/draw"
	"golang.org/x/image/webp"

	"github.com/lectern/lectern/i18n"
	"github.com/lectern/lectern/tenant"
)

// Account pictures (issue 13). What a person uploads is never served as
// sent: it must decode as the PNG, JPEG or WebP it claims to be, and what
// is kept is a new image drawn from its pixels (square, at most
// PictureSide a side), so no script, markup or metadata (EXIF, text
// chunks, GPS) that rode along in the file is ever served.
const (
	// MaxPictureBytes is the largest picture file accepted: 2 MiB.
	MaxPictureBytes = 2 << 20
	// PictureBodyLimit is the largest POST /account/picture body: the file
	// and 64 KiB of multipart framing and form fields. The server's 1 MiB
	// cap skips that route (internal/server), this one applies instead.
	PictureBodyLimit = MaxPictureBytes + 64<<10
	// PictureSide is the side of a stored picture, at most.
	PictureSide = 512
	// maxSourceSide and maxSourcePixels bound what is decoded at all: a
	// small file can declare a huge canvas (a decompression bomb), and the
	// header says so before any pixel is read.
	maxSourceSide   = 6000
	maxSourcePixels = 24_000_000
)

// PictureStore keeps the bytes of account pictures. The admin API's upload
// store (adminapi.FileStore: the data directory, or an S3 bucket) has this
// shape; the wiring passes it in. Account pictures live in its platform
// area, PictureArea, because accounts belong to no one site.
type PictureStore interface {
	Put(ctx context.Context, site tenant.ID, key string, r io.Reader) error
	Open(ctx context.Context, site tenant.ID, key string) (io.ReadCloser, error)
	Delete(ctx context.Context, site tenant.ID, key string) error
}

// PictureArea is the upload store's area for account pictures: no site has
// ID 0.
const PictureArea tenant.ID = 0

// pictureTypes are the accepted types and the decoders that check them.
var pictureTypes = map[string]struct {
	config func(io.Reader) (image.Config, error)
	decode func(io.Reader) (image.Image, error)
}{
	"image/png":  {png.DecodeConfig, png.Decode},
	"image/jpeg": {jpeg.DecodeConfig, jpeg.Decode},
	"image/webp": {webp.DecodeConfig, webp.Decode},
}

// pictureError is a refusal the person reads: what was wrong, with the
// HTTP status it is answered with.
type pictureError struct {
	status int
	// key and args are the message (package i18n); msg is it in English.
	key  string
	args []any
	msg  string
}

func (e *pictureError) Error() string { return e.msg }

func refusePicture(status int, key string, args ...any) error {
	return &pictureError{status: status, key: key, args: args, msg: i18n.T(i18n.Default, key, args...)}
}

// processedPicture is what is stored: the new image's bytes and its file
// extension (png or jpg).
type processedPicture struct {
	data []byte
	ext  string
}

// decodeSlots bounds the pictures decoded and redrawn at once, about one
// per core: the work is CPU-bound, and a burst of uploads must not starve
// sign-ins and token requests.
var decodeSlots = make(chan struct{}, max(1, runtime.NumCPU()))

// processPicture checks an uploaded file and draws the picture to keep.
// declared is the part's Content-Type. A JPEG stays a JPEG (photographs
// compress far better so); PNG and WebP become PNG (they may be
// transparent).
func processPicture(ctx context.Context, declared string, data []byte) (*processedPicture, error) {
	mt, _, _ := mime.ParseMediaType(declared)
	kind, ok := pictureTypes[mt]
	if !ok {
		return nil, refusePicture(http.StatusUnsupportedMediaType, "web.picture.type", "Type", describeType(mt))
	}
	if len(data) == 0 {
		return nil, refusePicture(http.StatusBadRequest, "web.picture.empty")
	}
	if len(data) > MaxPictureBytes {
		return nil, refusePicture(http.StatusRequestEntityTooLarge, "web.picture.too_big", "MiB", MaxPictureBytes>>20)
	}
	if sniffed, _, _ := mime.ParseMediaType(http.DetectContentType(data)); sniffed != mt {
		return nil, refusePicture(http.StatusUnsupportedMediaType, "web.picture.mismatch", "Type", describeType(mt))
	}
	cfg, err := kind.config(bytes.NewReader(data))
	if err != nil {
		return nil, refusePicture(http.StatusUnprocessableEntity, "web.picture.unreadable", "Type", describeType(mt))
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width > maxSourceSide || cfg.Height > maxSourceSide || cfg.Width*cfg.Height > maxSourcePixels {
		return nil, refusePicture(http.StatusUnprocessableEntity, "web.picture.dimensions",
			"Width", cfg.Width, "Height", cfg.Height, "Side", maxSourceSide, "Megapixels", maxSourcePixels/1_000_000)
	}
	select {
	case decodeSlots <- struct{}{}:
		defer func() { <-decodeSlots }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	src, err := kind.decode(bytes.NewReader(data))
	if err != nil {
		return nil, refusePicture(http.StatusUnprocessableEntity, "web.picture.unreadable", "Type", describeType(mt))
	}
	dst := squarePicture(src)
	var out bytes.Buffer
	p := &processedPicture{ext: "png"}
	if mt == "image/jpeg" {
		p.ext = "jpg"
		err = jpeg.Encode(&out, dst, &jpeg.Options{Quality: 85})
	} else {
		err = (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&out, dst)
	}
	if err != nil {
		return nil, err
	}
	p.data = out.Bytes()
	return p, nil
}

// squarePicture crops the middle square of src and scales it down to at
// most PictureSide a side (never up), into a fresh RGBA image.
func squarePicture(src image.Image) *image.RGBA {
	b := src.Bounds()
	side := min(b.Dx(), b.Dy())
	crop := image.Rect(0, 0, side, side).Add(image.Pt(b.Min.X+(b.Dx()-side)/2, b.Min.Y+(b.Dy()-side)/2))
	out := min(side, PictureSide)
	dst := image.NewRGBA(image.Rect(0, 0, out, out))
	draw.CatmullRom.Scale(dst, dst.Bounds(), src, crop, draw.Src, nil)
	return dst
}

// describeType names a media type for people.
func describeType(mt string) string {
	switch mt {
	case "":
		return "of no stated type"
	case "image/png":
		return "PNG"
	case "image/jpeg":
		return "JPEG"
	case "image/webp":
		return "WebP"
	case "image/svg+xml":
		return "an SVG image, which can carry scripts"
	}
	if len(mt) > 60 {
		mt = mt[:60]
	}
	return strings.ToValidUTF8(mt, "")
}

// pictureKeyEncoding is the upload store's key alphabet ([a-z2-7]).
var pictureKeyEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newPictureKey is 160 random bits: a picture's name cannot be guessed.
func newPictureKey() string {
	var b [20]byte
	_, _ = rand.Read(b[:])
	return pictureKeyEncoding.EncodeToString(b[:])
}

// pictureKeyLen is the length of newPictureKey's keys.
const pictureKeyLen = 32

// splitPictureFile returns the store key and media type of a stored
// picture's file name ("<key>.png" or "<key>.jpg"); anything else is not
// one of ours.
func splitPictureFile(file string) (key, contentType string, ok bool) {
	key, ext, found := strings.Cut(file, ".")
	if !found || len(key) != pictureKeyLen {
		return "", "", false
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return "", "", false
		}
	}
	switch ext {
	case "png":
		return key, "image/png", true
	case "jpg":
		return key, "image/jpeg", true
	}
	return "", "", false
}
