package platform

import (
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
