package adminapi

import (
	"context"
	"errors"
	"strings"

	"github.com/lectern/lectern/storage"
)

func (h *Handler) toAppearance(ctx context.Context, a *storage.Appearance) (Appearance, error) {
	out := Appearance{PrimaryColor: a.PrimaryColor, AccentColor: a.AccentColor, BackgroundColor: a.BackgroundColor,
		TextColor: a.TextColor, LogoFileId: a.LogoFileID}
	if a.LogoFileID != nil {
		f, err := h.store.FileRecords().Get(ctx, siteOf(ctx), *a.LogoFileID)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return out, err
		}
		if f != nil {
			out.LogoUrl = ptr(fileURL(ctx, f))
		}
	}
	return out, nil
}

// GetAppearance implements GET /appearance (appearance:read).
func (h *Handler) GetAppearance(ctx context.Context, _ GetAppearanceRequestObject) (GetAppearanceResponseObject, error) {
	a, err := h.store.Appearance(ctx, siteOf(ctx))
	if errors.Is(err, storage.ErrNotFound) {
		a, err = storage.DefaultAppearance(siteOf(ctx)), nil
	}
	if err != nil {
		return nil, err
	}
	out, err := h.toAppearance(ctx, a)
	if err != nil {
		return nil, err
	}
	return GetAppearance200JSONResponse(out), nil
}

// ReplaceAppearance implements PUT /appearance (appearance:write). The logo
// must be an image uploaded to this site.
func (h *Handler) ReplaceAppearance(ctx context.Context, req ReplaceAppearanceRequestObject) (ReplaceAppearanceResponseObject, error) {
	b := req.Body
	var f fields
	for _, c := range []struct{ field, v string }{{"primaryColor", b.PrimaryColor}, {"accentColor", b.AccentColor},
		{"backgroundColor", b.BackgroundColor}, {"textColor", b.TextColor}} {
		if !colorRE.MatchString(c.v) {
			f.add(c.field, "must be a colour as #rrggbb")
		}
	}
	if b.LogoFileId != nil {
		file, err := h.store.FileRecords().Get(ctx, siteOf(ctx), *b.LogoFileId)
		switch {
		case errors.Is(err, storage.ErrNotFound):
			f.add("logoFileId", "no uploaded file with this id at this site")
		case err != nil:
			return nil, err
		case !strings.HasPrefix(file.ContentType, "image/"):
			f.add("logoFileId", "must be an image (PNG, JPEG, GIF or WebP)")
		}
	}
	if err := f.err(); err != nil {
		return nil, err
	}
	a := &storage.Appearance{SiteID: siteOf(ctx), PrimaryColor: strings.ToLower(b.PrimaryColor), AccentColor: strings.ToLower(b.AccentColor),
		BackgroundColor: strings.ToLower(b.BackgroundColor), TextColor: strings.ToLower(b.TextColor), LogoFileID: b.LogoFileId}
	if err := h.store.SaveAppearance(ctx, a); err != nil {
		return nil, err
	}
	h.audit(ctx, "appearance.updated", "site", nil)
	out, err := h.toAppearance(ctx, a)
	if err != nil {
		return nil, err
	}
	return ReplaceAppearance200JSONResponse(out), nil
}
