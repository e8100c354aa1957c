package web

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"strconv"
	"strings"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/vocab"
)

// Avatars are public (the picture claim points at them, and clients show
// them without credentials), but a site answers only for people who hold a
// role there: anyone else, an existing account included, is 404, so a site
// does not reveal who has an account on the platform.

const (
	// avatarCSP forbids everything a picture could try: scripts, styles,
	// fetches, frames, forms; sandbox also gives it an opaque origin.
	avatarCSP = "default-src 'none'; sandbox"
	// generatedMaxAge: the initials follow the name, so the generated
	// avatar may change; an hour of caching, then revalidation by ETag.
	generatedMaxAge = "public, max-age=3600"
	// uploadedMaxAge: an uploaded picture's address names its content
	// (a new picture gets a new file name), so it can be kept for good.
	uploadedMaxAge = "public, max-age=31536000, immutable"
)

// validSub reports whether s can be a subject: the IDs of this platform
// are short tokens of letters, digits, '_' and '-'.
func validSub(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// avatarPerson returns the person sub names if they hold a role at the
// request's site; nil (after answering 404 or 503) otherwise.
func (h *Handler) avatarPerson(w http.ResponseWriter, r *http.Request, sub string) *storage.User {
	site, _ := tenant.FromContext(r.Context())
	if !validSub(sub) {
		avatarNotFound(w)
		return nil
	}
	roles, err := h.store.RolesAt(r.Context(), site.ID, sub)
	if err != nil {
		h.avatarFailed(w, r, err)
		return nil
	}
	if len(roles) == 0 {
		avatarNotFound(w)
		return nil
	}
	u, err := h.store.UserByID(r.Context(), sub)
	if errors.Is(err, storage.ErrNotFound) {
		avatarNotFound(w)
		return nil
	} else if err != nil {
		h.avatarFailed(w, r, err)
		return nil
	}
	return u
}

// generatedAvatar serves GET /avatars/{sub}.svg.
func (h *Handler) generatedAvatar(w http.ResponseWriter, r *http.Request) {
	sub, ok := strings.CutSuffix(r.PathValue("name"), ".svg")
	if !ok {
		avatarNotFound(w)
		return
	}
	u := h.avatarPerson(w, r, sub)
	if u == nil {
		return
	}
	body := avatarSVG(u.ID, u.Name)
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	hdr := avatarHeaders(w, etag, generatedMaxAge)
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hdr.Set("Content-Type", "image/svg+xml")
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// uploadedAvatar serves GET /avatars/{sub}/{file}: the person's current
// uploaded picture. A former picture's address is 404, like any other.
func (h *Handler) uploadedAvatar(w http.ResponseWriter, r *http.Request) {
	file := r.PathValue("file")
	key, contentType, ok := splitPictureFile(file)
	if !ok {
		avatarNotFound(w)
		return
	}
	u := h.avatarPerson(w, r, r.PathValue("sub"))
	if u == nil {
		return
	}
	if u.PictureFile != file {
		avatarNotFound(w)
		return
	}
	etag := `"` + key + `"`
	hdr := avatarHeaders(w, etag, uploadedMaxAge)
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	rc, err := h.pictures.Open(r.Context(), PictureArea, key)
	if errors.Is(err, fs.ErrNotExist) {
		h.logger.WarnContext(r.Context(), "account picture named but not stored", "user", u.ID, "file", file)
		avatarNotFound(w)
		return
	} else if err != nil {
		h.avatarFailed(w, r, err)
		return
	}
	defer rc.Close()
	hdr.Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		if _, err := io.Copy(w, io.LimitReader(rc, MaxPictureBytes)); err != nil {
			h.logger.WarnContext(r.Context(), "serving an account picture failed", "file", file, "err", err)
		}
	}
}

func avatarHeaders(w http.ResponseWriter, etag, cacheControl string) http.Header {
	hdr := w.Header()
	hdr.Set("ETag", etag)
	hdr.Set("Cache-Control", cacheControl)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Content-Security-Policy", avatarCSP)
	// Clients show pictures on their own pages.
	hdr.Set("Cross-Origin-Resource-Policy", "cross-origin")
	return hdr
}

func avatarNotFound(w http.ResponseWriter) {
	w.Header().Del("ETag")
	tenant.WriteError(w, http.StatusNotFound, "not_found", "no picture at this address")
}

func (h *Handler) avatarFailed(w http.ResponseWriter, r *http.Request, err error) {
	h.logger.ErrorContext(r.Context(), "avatar unavailable", "path", r.URL.Path, "err", err)
	w.Header().Set("Retry-After", "5")
	tenant.WriteError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "the picture cannot be served right now")
}

// etagMatches implements If-None-Match (RFC 9110 §13.1.2) for one strong
// tag: "*", or the tag in a comma-separated list (weak forms compare equal).
func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}

// avatarsPattern are the mux patterns of the avatars.
var (
	generatedAvatarPattern = "GET " + vocab.AvatarsPath + "/{name}"
	uploadedAvatarPattern  = "GET " + vocab.AvatarsPath + "/{sub}/{file}"
)
