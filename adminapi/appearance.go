package adminapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/lectern/lectern/internal/brand"
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
	if err := contrastProblem(b.PrimaryColor, b.AccentColor, b.BackgroundColor, b.TextColor); err != nil {
		return nil, err
	}
	a := &storage.Appearance{SiteID: siteOf(ctx), PrimaryColor: strings.ToLower(b.PrimaryColor), AccentColor: strings.ToLower(b.AccentColor),
		BackgroundColor: strings.ToLower(b.BackgroundColor), TextColor: strings.ToLower(b.TextColor), LogoFileID: b.LogoFileId}
	if err := h.store.SaveAppearance(ctx, a); err != nil {
		return nil, err
	}
	if h.brand != nil {
		h.brand.Forget(siteOf(ctx))
	}
	h.audit(ctx, "appearance.updated", "site", nil)
	out, err := h.toAppearance(ctx, a)
	if err != nil {
		return nil, err
	}
	return ReplaceAppearance200JSONResponse(out), nil
}

// contrastProblem refuses colours a person could not read: the pairs of
// brand.Pairs must reach WCAG 2.2 AA (4.5:1). The problem names the pair
// and its ratio, in errors[] (both fields) and in contrast.
func contrastProblem(primary, accent, background, text string) *problem {
	e := brand.Check(brand.Colors{Primary: primary, Accent: accent, Background: background, Text: text})
	if e == nil {
		return nil
	}
	ratio := brand.FormatRatio(e.Ratio)
	return &problem{
		Status: http.StatusUnprocessableEntity, Type: typeContrast, Title: "Colours too close to read",
		Detail: fmt.Sprintf("%s on %s (%s) has a contrast of %s:1; WCAG 2.2 AA needs %s:1",
			e.Pair.Foreground, e.Pair.Background, e.Pair.Says, ratio, brand.FormatRatio(brand.MinContrast)),
		Fields: []InvalidField{
			{Field: e.Pair.Foreground, Message: fmt.Sprintf("contrast %s:1 with %s; needs %s:1", ratio, e.Pair.Background, brand.FormatRatio(brand.MinContrast))},
			{Field: e.Pair.Background, Message: fmt.Sprintf("contrast %s:1 with %s; needs %s:1", ratio, e.Pair.Foreground, brand.FormatRatio(brand.MinContrast))},
		},
		Contrast: &ContrastFailure{Foreground: ContrastFailureForeground(e.Pair.Foreground), Background: ContrastFailureBackground(e.Pair.Background),
			Ratio: float32(e.Ratio), Required: brand.MinContrast},
	}
}
