package platform

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// ErrNoSite: a --site reference names no site.
var ErrNoSite = errors.New("no such site")

// SiteByRef finds the site an operator names (--site): by its exact slug,
// else by its ID written in canonical decimal (no sign, no leading zero,
// nothing around it). A slug wins over the ID of the same digits, so a
// site whose slug is all digits stays reachable by its slug; the site with
// that ID is then reached by its own slug. Anything else ("16abc", "0x10",
// " 16") names no site: a mistyped slug never reaches another site.
func SiteByRef(ctx context.Context, store storage.Store, ref string) (*storage.Site, error) {
	if ref == "" {
		return nil, fmt.Errorf("%w: a slug or an ID is required", ErrNoSite)
	}
	s, err := store.SiteBySlug(ctx, ref)
	if !errors.Is(err, storage.ErrNotFound) {
		return s, err
	}
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil && id > 0 && strconv.FormatInt(id, 10) == ref {
		s, err := store.SiteByID(ctx, tenant.ID(id))
		if !errors.Is(err, storage.ErrNotFound) {
			return s, err
		}
	}
	return nil, fmt.Errorf("%w: no site has the slug or ID %q", ErrNoSite, ref)
}
