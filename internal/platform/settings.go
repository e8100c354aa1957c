package platform

import (
	"fmt"
	"maps"

	"github.com/lectern/lectern/storage"
)

// SettingKeyRotationDays is the site setting (storage.Site.Settings) that
// overrides how many days a signing key signs before the scheduler rotates
// it.
const SettingKeyRotationDays = "key_rotation_days"

// MaxKeyRotationDays bounds the setting: ten years.
const MaxKeyRotationDays = 3650

// KeyRotationDays returns the site's rotation period in days, or 0 when
// the site keeps the platform default. Settings are stored as JSON, so the
// number arrives as a float64.
func KeyRotationDays(s *storage.Site) int {
	switch v := s.Settings[SettingKeyRotationDays].(type) {
	case float64:
		if v >= 1 && v <= MaxKeyRotationDays {
			return int(v)
		}
	case int:
		if v >= 1 && v <= MaxKeyRotationDays {
			return v
		}
	}
	return 0
}

// SetKeyRotationDays sets the site's rotation period in days (0 removes the
// override). UpdateSite reschedules the site's key when it changed.
func SetKeyRotationDays(s *storage.Site, days int) error {
	if days < 0 || days > MaxKeyRotationDays {
		return fmt.Errorf("%w: key rotation days %d must be between 1 and %d (0: the platform's period)", ErrInvalid, days, MaxKeyRotationDays)
	}
	settings := maps.Clone(s.Settings)
	if settings == nil {
		settings = map[string]any{}
	}
	delete(settings, SettingKeyRotationDays)
	if days > 0 {
		settings[SettingKeyRotationDays] = float64(days)
	}
	s.Settings = settings
	return nil
}
