package web

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/lectern/lectern/vocab"
)

// The account page (/account) is where a person manages what belongs to
// their account rather than to one site. Today it has one section, the
// profile picture; it is a self-contained section so the full account page
// (name, password, e-mail, passkeys, sessions) can add its own beside it.

const (
	accountPath = "/account"
	picturePath = "/account/picture"
	// PictureUploadPath is where the account page posts a new picture;
	// the wiring gives it a longer deadline and PictureBodyLimit.
	PictureUploadPath = picturePath
)

type accountData struct {
	chrome
	Name, Email string
	// PictureURL is what the picture claim says at this site; empty
	// where the site does not serve the person's picture (no role there:
	// docs/decisions.md, Account pictures), so the page never shows an
	// address that answers 404.
	PictureURL string
	// Uploaded: the picture is the person's own (they may remove it).
	Uploaded bool
	MaxMiB   int
	Accept   string
}

// account serves GET /account.
func (h *Handler) account(w http.ResponseWriter, r *http.Request, rq *request) {
	u := rq.user
	d := accountData{
		chrome: chromeFor(rq, "account", "profile"), Name: u.Name, Email: u.Email,
		Uploaded: u.PictureFile != "", MaxMiB: MaxPictureBytes >> 20, Accept: "image/png,image/jpeg,image/webp",
	}
	// The avatar route's rule (avatar.go): a site serves the pictures of
	// the people who hold a role there.
	if len(rq.roles) > 0 {
		d.PictureURL = vocab.PictureURL(rq.site.Origin, u.ID, u.PictureFile, u.Picture)
	}
	h.render(w, r, rq, http.StatusOK, "account", "Your account", d, h.takeFlash(r.Context(), rq))
}

// pictureUpload serves POST /account/picture (multipart, field "picture"):
// the file is checked and redrawn (processPicture), stored under a new name
// in the platform area of the upload store, and named on the account; the
// picture it replaces is deleted.
func (h *Handler) pictureUpload(w http.ResponseWriter, r *http.Request, rq *request) {
	refuse := func(status int, msg string) {
		h.problem(w, r, rq, status, "Picture not accepted", msg, "Your picture was not changed. Go back and choose another file.")
	}
	files := r.MultipartForm.File["picture"]
	if len(files) != 1 {
		refuse(http.StatusBadRequest, "Choose one picture file.")
		return
	}
	fh := files[0]
	if fh.Size > MaxPictureBytes {
		refuse(http.StatusRequestEntityTooLarge, h.t(r, rq, "web.picture.too_big", "MiB", MaxPictureBytes>>20))
		return
	}
	f, err := fh.Open()
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxPictureBytes+1))
	f.Close()
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	ctx := r.Context()
	pic, err := processPicture(ctx, fh.Header.Get("Content-Type"), data)
	var pe *pictureError
	switch {
	case errors.As(err, &pe):
		refuse(pe.status, h.t(r, rq, pe.key, pe.args...))
		return
	case err != nil:
		h.fail(w, r, rq, err)
		return
	}
	key := newPictureKey()
	if err := h.pictures.Put(ctx, PictureArea, key, bytes.NewReader(pic.data)); err != nil {
		h.fail(w, r, rq, err)
		return
	}
	file := key + "." + pic.ext
	previous, err := h.platform.SetUserPicture(ctx, rq.user.ID, file)
	if err != nil {
		h.deletePicture(ctx, file)
		h.fail(w, r, rq, err)
		return
	}
	h.deletePicture(ctx, previous)
	h.audit(r, rq, "account.picture_changed", "user:"+rq.user.ID, map[string]any{"size": len(pic.data)})
	_ = h.setFlash(ctx, rq, flash{Kind: "ok", Message: "Your picture was changed. Apps see it the next time they read your profile."})
	seeOther(w, r, accountPath)
}

// pictureRemove serves POST /account/picture/remove: back to the
// generated avatar.
func (h *Handler) pictureRemove(w http.ResponseWriter, r *http.Request, rq *request) {
	previous, err := h.platform.SetUserPicture(r.Context(), rq.user.ID, "")
	if err != nil {
		h.fail(w, r, rq, err)
		return
	}
	h.deletePicture(r.Context(), previous)
	if previous != "" {
		h.audit(r, rq, "account.picture_removed", "user:"+rq.user.ID, nil)
	}
	_ = h.setFlash(r.Context(), rq, flash{Kind: "ok", Message: "Your picture was removed; your initials show instead."})
	seeOther(w, r, accountPath)
}

// deletePicture removes a stored picture's bytes; a failure leaves an
// unreferenced file behind, which is logged, never shown.
func (h *Handler) deletePicture(ctx context.Context, file string) {
	key, _, ok := splitPictureFile(file)
	if !ok {
		return
	}
	if err := h.pictures.Delete(context.WithoutCancel(ctx), PictureArea, key); err != nil {
		h.logger.WarnContext(ctx, "a replaced account picture was not deleted", "file", file, "err", err)
	}
}
