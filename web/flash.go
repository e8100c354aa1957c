package web

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"time"

	"github.com/lectern/lectern/session"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// flash is a one-time message for the page after a POST (post, redirect,
// get). It lives in the cache under the session, never in a cookie, because
// it can carry a client secret that must be shown exactly once and stored
// nowhere else.
type flash struct {
	Kind    string `json:"kind"` // "ok" or "error"
	Message string `json:"message"`
	// Secret is a new client secret for the application SecretFor; only
	// that application's page shows it.
	Secret    string `json:"secret,omitempty"`
	SecretFor string `json:"secret_for,omitempty"`
}

// flashLifetime bounds how long a message waits for its page. A secret not
// seen by then is lost, and the operator rotates it.
const flashLifetime = 5 * time.Minute

// flashKey names the session's flash entry. The session's CSRF token is a
// secret of the session that never changes during it, so the key belongs to
// this session alone (another tab of the same session shares it; another
// browser of the same person does not).
func flashKey(site tenant.ID, sess *session.Session) string {
	sum := sha256.Sum256([]byte("lectern-flash:" + sess.CSRF))
	return storage.CacheKey(site, "flash", base64.RawURLEncoding.EncodeToString(sum[:]))
}

// setFlash stores the message for the next page of the session. A failure
// loses only the message (the action is done), unless it carries a secret:
// then the caller must tell the person another way, so the error is
// returned.
func (h *Handler) setFlash(ctx context.Context, rq *request, f flash) error {
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	if err := h.cache.Set(ctx, flashKey(rq.site.ID, rq.sess), b, flashLifetime); err != nil {
		h.logger.WarnContext(ctx, "flash message not stored", "err", err)
		return err
	}
	return nil
}

// takeFlash returns and removes the session's pending message, if any.
func (h *Handler) takeFlash(ctx context.Context, rq *request) *flash {
	b, err := h.cache.GetDel(ctx, flashKey(rq.site.ID, rq.sess))
	if err != nil {
		if !errors.Is(err, storage.ErrCacheMiss) {
			h.logger.WarnContext(ctx, "flash message not read", "err", err)
		}
		return nil
	}
	var f flash
	if json.Unmarshal(b, &f) != nil {
		return nil
	}
	return &f
}
