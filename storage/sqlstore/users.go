package sqlstore

import (
	"context"
	"sort"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// CreateUser implements storage.UserStore. E-mail addresses are stored
// lower-cased so that uniqueness and sign-in ignore case.
func (s *Store) CreateUser(ctx context.Context, u *storage.User) error {
	now := time.Now().UTC()
	u.CreatedAt, u.UpdatedAt = now, now
	u.Email = strings.ToLower(strings.TrimSpace(u.Email))
	return mapErr(s.db.WithContext(ctx).Create(u).Error)
}

// UpdateUser implements storage.UserStore.
func (s *Store) UpdateUser(ctx context.Context, u *storage.User) error {
	if u.ID == "" {
		return storage.ErrNotFound
	}
	u.UpdatedAt = time.Now().UTC()
	u.Email = strings.ToLower(strings.TrimSpace(u.Email))
	res := s.db.WithContext(ctx).Model(u).Select("*").Omit("created_at").Updates(u)
	if res.Error != nil {
		return mapErr(res.Error)
	}
	if res.RowsAffected == 0 {
		return storage.ErrNotFound
	}
	return nil
}

// SetUserPicture implements storage.UserStore: only picture_file and
// updated_at change, so a concurrent change of the name or password is
// not undone.
func (s *Store) SetUserPicture(ctx context.Context, userID, file string) (string, error) {
	var previous string
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var u storage.User
		if err := tx.Select("id", "picture_file").Take(&u, "id = ?", userID).Error; err != nil {
			return err
		}
		previous = u.PictureFile
		return tx.Model(&storage.User{}).Where("id = ?", userID).
			Updates(map[string]any{"picture_file": file, "updated_at": time.Now().UTC()}).Error
	})
	return previous, mapErr(err)
}

// SetUserLanguage implements storage.UserStore: only language and
// updated_at change.
func (s *Store) SetUserLanguage(ctx context.Context, userID, lang string) error {
	res := s.db.WithContext(ctx).Model(&storage.User{}).Where("id = ?", userID).
		Updates(map[string]any{"language": lang, "updated_at": time.Now().UTC()})
	if res.Error != nil {
		return mapErr(res.Error)
	}
	if res.RowsAffected == 0 {
		return storage.ErrNotFound
	}
	return nil
}

// UserByID implements storage.UserStore.
func (s *Store) UserByID(ctx context.Context, id string) (*storage.User, error) {
	var u storage.User
	if err := s.db.WithContext(ctx).Take(&u, "id = ?", id).Error; err != nil {
		return nil, mapErr(err)
	}
	return &u, nil
}

// UserByEmail implements storage.UserStore.
func (s *Store) UserByEmail(ctx context.Context, email string) (*storage.User, error) {
	var u storage.User
	err := s.db.WithContext(ctx).Take(&u, "email = ?", strings.ToLower(strings.TrimSpace(email))).Error
	if err != nil {
		return nil, mapErr(err)
	}
	return &u, nil
}

// GrantRole implements storage.UserStore.
func (s *Store) GrantRole(ctx context.Context, site tenant.ID, userID, role string) error {
	r := storage.SiteRole{SiteID: site, UserID: userID, Role: role, CreatedAt: time.Now().UTC()}
	return mapErr(s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&r).Error)
}

// RevokeRole implements storage.UserStore.
func (s *Store) RevokeRole(ctx context.Context, site tenant.ID, userID, role string) error {
	res := s.db.WithContext(ctx).Scopes(siteScope(site)).
		Where("user_id = ? AND role = ?", userID, role).Delete(&storage.SiteRole{})
	if res.Error != nil {
		return mapErr(res.Error)
	}
	if res.RowsAffected == 0 {
		return storage.ErrNotFound
	}
	return nil
}

// RolesAt implements storage.UserStore.
func (s *Store) RolesAt(ctx context.Context, site tenant.ID, userID string) ([]string, error) {
	var roles []string
	err := s.db.WithContext(ctx).Model(&storage.SiteRole{}).Scopes(siteScope(site)).
		Where("user_id = ?", userID).Order("role").Pluck("role", &roles).Error
	return roles, mapErr(err)
}

// SitesOfUser implements storage.UserStore. It is the one read that crosses
// sites by design: Viewer.schools lists the viewer's own roles everywhere.
func (s *Store) SitesOfUser(ctx context.Context, userID string) ([]storage.UserSiteRoles, error) {
	var rows []struct {
		SiteID tenant.ID
		Slug   string
		Name   string
		Origin string
		Role   string
	}
	err := s.db.WithContext(ctx).Table("site_roles").
		Select("site_roles.site_id, sites.slug, sites.name, sites.origin, site_roles.role").
		Joins("JOIN sites ON sites.id = site_roles.site_id").
		Where("site_roles.user_id = ?", userID).
		Order("site_roles.site_id, site_roles.role").Find(&rows).Error
	if err != nil {
		return nil, mapErr(err)
	}
	var out []storage.UserSiteRoles
	for _, r := range rows {
		if n := len(out); n > 0 && out[n-1].SiteID == r.SiteID {
			out[n-1].Roles = append(out[n-1].Roles, r.Role)
			continue
		}
		out = append(out, storage.UserSiteRoles{SiteID: r.SiteID, Slug: r.Slug, Name: r.Name, Origin: r.Origin, Roles: []string{r.Role}})
	}
	for i := range out {
		sort.Strings(out[i].Roles)
	}
	return out, nil
}
