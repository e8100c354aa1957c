package adminapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"unicode"

	"github.com/labstack/echo/v4"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

const kindFile kind = "file"

// DefaultMaxUploadBytes is the largest file accepted: 10 MiB. The server's
// general 1 MiB body limit does not apply to POST /files; it caps that
// request at UploadBodyLimit instead.
const DefaultMaxUploadBytes = 10 << 20

// UploadBodyLimit is the largest request body POST /files may send: the
// largest file and 64 KiB of multipart framing and other form parts.
const UploadBodyLimit = DefaultMaxUploadBytes + 64<<10

// uploadTypes are the accepted content types. Each must also be what the
// content is (http.DetectContentType), so a script cannot be uploaded as an
// image. SVG is refused: it can carry script.
var uploadTypes = map[string]bool{
	"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true, "application/pdf": true,
}

func fileURL(ctx context.Context, f *storage.File) string {
	return callerOf(ctx).site.URL(UploadsPath + "/" + f.Key)
}

func toFile(ctx context.Context, f *storage.File) File {
	return File{Id: f.ID, Name: f.Name, ContentType: f.ContentType, SizeBytes: f.SizeBytes, Sha256: f.SHA256,
		Url: fileURL(ctx, f), CreatedAt: f.CreatedAt}
}

var keyEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newFileKey is 160 random bits: the public name of an upload.
func newFileKey() string {
	var b [20]byte
	_, _ = rand.Read(b[:])
	return keyEncoding.EncodeToString(b[:])
}

// cleanName keeps the base name of an uploaded file, printable and short.
func cleanName(name string) string {
	name = path.Base(strings.ReplaceAll(name, `\`, "/"))
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '"' || bidiOrInvisible(r) {
			return -1
		}
		return r
	}, name)
	if r := []rune(name); len(r) > 200 {
		name = string(r[:200])
	}
	if name == "" || name == "." || name == "/" {
		return "upload"
	}
	return name
}

func bidiOrInvisible(r rune) bool {
	return (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069) || r == 0x200E || r == 0x200F || r == 0x061C || r == 0x200B || r == 0xFEFF
}

func unsupported(detail string) *problem {
	return &problem{Status: http.StatusUnsupportedMediaType, Detail: detail,
		Fields: []InvalidField{{Field: "file", Message: "must be a PNG, JPEG, GIF or WebP image or a PDF document"}}}
}

// UploadFile implements POST /files (storage:write).
func (h *Handler) UploadFile(ctx context.Context, req UploadFileRequestObject) (UploadFileResponseObject, error) {
	var part io.Reader
	var declared, name string
	for {
		p, err := req.Body.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var he *echo.HTTPError
			if errors.As(err, &he) {
				return nil, err
			}
			return nil, errBadRequest("the body is not a valid multipart form")
		}
		if p.FormName() == "file" {
			part, name = p, cleanName(p.FileName())
			declared, _, _ = mime.ParseMediaType(p.Header.Get("Content-Type"))
			break
		}
	}
	if part == nil {
		return nil, invalidField("file", "is required: send the file as the form part named file")
	}
	if !uploadTypes[declared] {
		return nil, unsupported("files of type " + strconv.Quote(declared) + " are not accepted")
	}
	data, err := io.ReadAll(io.LimitReader(part, h.maxUpload+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > h.maxUpload {
		return nil, &problem{Status: http.StatusRequestEntityTooLarge, Detail: "a file may have at most " + strconv.FormatInt(h.maxUpload, 10) + " bytes",
			Fields: []InvalidField{{Field: "file", Message: "is too large"}}}
	}
	if len(data) == 0 {
		return nil, invalidField("file", "is empty")
	}
	if sniffed, _, _ := mime.ParseMediaType(http.DetectContentType(data)); sniffed != declared {
		return nil, unsupported("the content is not " + declared)
	}
	site := siteOf(ctx)
	sum := sha256.Sum256(data)
	f := &storage.File{Key: newFileKey(), Name: name, ContentType: declared, SizeBytes: int64(len(data)),
		SHA256: hex.EncodeToString(sum[:]), CreatedBy: callerOf(ctx).token.Subject}
	if err := h.files.Put(ctx, site, f.Key, bytes.NewReader(data)); err != nil {
		return nil, err
	}
	if err := h.store.FileRecords().Create(ctx, site, f); err != nil {
		_ = h.files.Delete(ctx, site, f.Key)
		return nil, err
	}
	h.audit(ctx, "file.uploaded", kindFile.target(f.ID), map[string]any{"content_type": f.ContentType, "size": f.SizeBytes})
	return UploadFile201JSONResponse(toFile(ctx, f)), nil
}

// files has no view: a file's URL depends on the request (toFile).
var files = resource[storage.File, struct{}]{kind: kindFile, records: Store.FileRecords,
	inUse: func(ctx context.Context, h *Handler, f *storage.File) error {
		a, err := h.store.Appearance(ctx, siteOf(ctx))
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		if a != nil && a.LogoFileID != nil && *a.LogoFileID == f.ID {
			return errConflict("the file is the site's logo; change the appearance first")
		}
		return nil
	}}

// GetFile implements GET /files/{fileId} (storage:write).
func (h *Handler) GetFile(ctx context.Context, req GetFileRequestObject) (GetFileResponseObject, error) {
	f, err := files.row(ctx, h, req.FileId)
	if err != nil {
		return nil, err
	}
	return GetFile200JSONResponse(toFile(ctx, f)), nil
}

// DeleteFile implements DELETE /files/{fileId} (storage:write). The site's
// logo stays while it is the logo.
func (h *Handler) DeleteFile(ctx context.Context, req DeleteFileRequestObject) (DeleteFileResponseObject, error) {
	f, err := files.delete(ctx, h, req.FileId)
	if err != nil {
		return nil, err
	}
	if err := h.files.Delete(ctx, siteOf(ctx), f.Key); err != nil {
		h.log.WarnContext(ctx, "uploaded file's content not deleted", "key", f.Key, "err", err)
	}
	return DeleteFile204Response{}, nil
}

// serveUpload answers GET /uploads/{key}: the file, publicly, as stored.
// The headers keep a browser from running it (nosniff, a sandboxing CSP)
// and let caches keep it for good (a key is never reused).
func (h *Handler) serveUpload(c echo.Context) error {
	r := c.Request()
	ctx := r.Context()
	site, ok := tenant.FromContext(ctx)
	key := c.Param("key")
	if !ok || !ValidFileKey(key) {
		return h.writeError(c, errNotFound("no such file"))
	}
	rows, _, err := h.store.FileRecords().List(ctx, site.ID, storage.Page{Limit: 1}, storage.Match{Field: "Key", Value: key})
	if err != nil {
		return h.writeError(c, err)
	}
	if len(rows) == 0 {
		return h.writeError(c, errNotFound("no such file"))
	}
	f := rows[0]
	etag := `"` + f.SHA256 + `"`
	hdr := c.Response().Header()
	hdr.Set("ETag", etag)
	hdr.Set("Cache-Control", "public, max-age=31536000, immutable")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		return c.NoContent(http.StatusNotModified)
	}
	rc, err := h.files.Open(ctx, site.ID, key)
	if errors.Is(err, fs.ErrNotExist) {
		h.log.WarnContext(ctx, "uploaded file has a row but no content", "key", key)
		return h.writeError(c, errNotFound("no such file"))
	} else if err != nil {
		return h.writeError(c, err)
	}
	defer rc.Close()
	disposition := "inline"
	if !strings.HasPrefix(f.ContentType, "image/") {
		disposition = "attachment"
	}
	if cd := mime.FormatMediaType(disposition, map[string]string{"filename": f.Name}); cd != "" {
		disposition = cd
	}
	hdr.Set("Content-Disposition", disposition)
	hdr.Set("Content-Type", f.ContentType)
	hdr.Set("Content-Length", strconv.FormatInt(f.SizeBytes, 10))
	c.Response().WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		if _, err := io.Copy(c.Response(), rc); err != nil {
			h.log.WarnContext(ctx, "serving an upload failed", "key", key, "err", err)
		}
	}
	return nil
}
