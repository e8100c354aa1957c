package adminapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/lectern/lectern/storage"
)

const (
	idempotencyHeader = "Idempotency-Key"
	// replayedHeader marks an answer given again for a retried request.
	replayedHeader = "Idempotent-Replayed"
	// idempotencyTTL is how long a key and its answer are kept.
	idempotencyTTL = 24 * time.Hour
	// maxIdempotencyKey bounds the key (as the document does).
	maxIdempotencyKey = 255
	// maxIdempotentBody bounds what is read to hash a request; the server's
	// body limit is lower.
	maxIdempotentBody = 8 << 20
)

// idemRecord is what the cache keeps under a key: the request's hash and,
// once the first request finished, its answer.
type idemRecord struct {
	Hash        string `json:"hash"`
	Done        bool   `json:"done"`
	Status      int    `json:"status,omitempty"`
	ContentType string `json:"content_type,omitempty"`
	Body        []byte `json:"body,omitempty"`
}

// idempotencyKey is the cache key of a client's key. It is scoped to the
// site and the token's subject: one operator's key never answers (nor
// blocks) another's request, and answers that carry secrets (an
// application's client_secret) are only ever replayed to their author.
func idempotencyKey(c *caller, key string) string {
	sum := sha256.Sum256([]byte(c.token.Subject + "\x00" + key))
	return storage.CacheKey(c.site.ID, "idem", hex.EncodeToString(sum[:]))
}

// idempotent runs a POST that carries an Idempotency-Key at most once per
// key and request (draft-ietf-httpapi-idempotency-key-header): the first
// request's answer is kept for 24 hours and given again, with
// Idempotent-Replayed: true, to a retry with the same key and the same
// request (see fingerprint); the same key with
// another request is 422; a retry while the first still runs is 409.
// Answers of 5xx are not kept, so such a request can be retried.
func (h *Handler) idempotent(c echo.Context, next echo.HandlerFunc) error {
	r := c.Request()
	ctx := r.Context()
	key := r.Header.Get(idempotencyHeader)
	if len(key) > maxIdempotencyKey || !printable(key) || len(r.Header.Values(idempotencyHeader)) != 1 {
		return h.writeError(c, errBadRequest("Idempotency-Key must be one value of at most 255 printable characters",
			InvalidField{Field: idempotencyHeader, Message: "is malformed"}))
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxIdempotentBody+1))
	if err != nil {
		return h.writeError(c, err)
	}
	if len(body) > maxIdempotentBody {
		return h.writeError(c, &problem{Status: http.StatusRequestEntityTooLarge, Detail: "the request body is too large"})
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	hash := fingerprint(r, body)

	ck := idempotencyKey(callerOf(ctx), key)
	pending, _ := json.Marshal(idemRecord{Hash: hash})
	fresh, err := h.cache.SetNX(ctx, ck, pending, idempotencyTTL)
	if err != nil {
		return h.writeError(c, errors.Join(storage.ErrUnavailable, err))
	}
	if !fresh {
		raw, err := h.cache.Get(ctx, ck)
		if errors.Is(err, storage.ErrCacheMiss) {
			// Expired or released between the two calls: ask for a retry.
			return h.writeError(c, &problem{Status: http.StatusConflict, Type: typeIdempotencyBusy, Title: "Request in progress",
				Detail: "a request with this Idempotency-Key is being processed; retry shortly"})
		}
		if err != nil {
			return h.writeError(c, errors.Join(storage.ErrUnavailable, err))
		}
		var rec idemRecord
		if err := json.Unmarshal(raw, &rec); err != nil {
			return h.writeError(c, err)
		}
		switch {
		case rec.Hash != hash:
			return h.writeError(c, &problem{Status: http.StatusUnprocessableEntity, Type: typeIdempotencyReuse, Title: "Idempotency-Key reused",
				Detail: "this Idempotency-Key was used for a different request", Fields: []InvalidField{{Field: idempotencyHeader, Message: "was used for a different request"}}})
		case !rec.Done:
			return h.writeError(c, &problem{Status: http.StatusConflict, Type: typeIdempotencyBusy, Title: "Request in progress",
				Detail: "a request with this Idempotency-Key is being processed; retry shortly"})
		}
		w := c.Response()
		if rec.ContentType != "" {
			w.Header().Set("Content-Type", rec.ContentType)
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set(replayedHeader, "true")
		w.WriteHeader(rec.Status)
		_, _ = w.Write(rec.Body)
		return nil
	}

	rec := &recorder{ResponseWriter: c.Response().Writer}
	c.Response().Writer = rec
	if err := next(c); err != nil {
		_ = h.writeError(c, err)
	}
	c.Response().Writer = rec.ResponseWriter
	// A handler that wrote nothing (echo's response reads 200 until
	// written) leaves nothing to replay: the key is released, as after a
	// 5xx.
	status := c.Response().Status
	if status >= 500 || !c.Response().Committed {
		if err := h.cache.Delete(ctx, ck); err != nil {
			h.log.WarnContext(ctx, "idempotency key not released", "err", err)
		}
		return nil
	}
	done, _ := json.Marshal(idemRecord{Hash: hash, Done: true, Status: status, ContentType: c.Response().Header().Get("Content-Type"), Body: rec.body.Bytes()})
	if err := h.cache.Set(ctx, ck, done, idempotencyTTL); err != nil {
		h.log.WarnContext(ctx, "idempotent answer not kept", "err", err)
	}
	return nil
}

// fingerprint identifies a request for its Idempotency-Key: method, path,
// query, media type and what the body says rather than its bytes, so that
// a client's retry matches however it serializes: JSON in canonical form
// (members sorted, insignificant space gone), multipart by its parts (name,
// file name, type and content) without the boundary, which clients draw
// anew for every attempt. A body that does not parse is taken as bytes.
func fingerprint(r *http.Request, body []byte) string {
	sum := sha256.New()
	field := func(b []byte) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		sum.Write(n[:])
		sum.Write(b)
	}
	mt, params, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	for _, part := range []string{r.Method, r.URL.Path, r.URL.RawQuery, mt} {
		field([]byte(part))
	}
	switch {
	case mt == "application/json":
		var v any
		d := json.NewDecoder(bytes.NewReader(body))
		d.UseNumber()
		if d.Decode(&v) == nil && !d.More() {
			if canon, err := json.Marshal(v); err == nil {
				field([]byte("json"))
				field(canon)
				return hex.EncodeToString(sum.Sum(nil))
			}
		}
	case mt == "multipart/form-data" && params["boundary"] != "":
		if parts, ok := multipartParts(body, params["boundary"]); ok {
			field([]byte("multipart"))
			for _, p := range parts {
				field(p)
			}
			return hex.EncodeToString(sum.Sum(nil))
		}
	}
	field([]byte("raw"))
	field(body)
	return hex.EncodeToString(sum.Sum(nil))
}

// multipartParts returns, for each part in order, its form name, file name,
// content type and the SHA-256 of its content.
func multipartParts(body []byte, boundary string) ([][]byte, bool) {
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	var out [][]byte
	for {
		p, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) {
			return out, true
		}
		if err != nil {
			return nil, false
		}
		h := sha256.New()
		if _, err := io.Copy(h, p); err != nil {
			return nil, false
		}
		out = append(out, []byte(p.FormName()), []byte(p.FileName()), []byte(p.Header.Get("Content-Type")), h.Sum(nil))
	}
}

// recorder copies what a handler writes.
type recorder struct {
	http.ResponseWriter
	body bytes.Buffer
}

func (r *recorder) Write(b []byte) (int, error) {
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
