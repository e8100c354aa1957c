package storage

import (
	"encoding/json"
	"math"
)

// The keys of a site's settings that hold its overrides of the platform's
// limits (package limits): the operators' (admin API, admin area) and the
// hosting provider's (lectern site update --limit). Both are objects of
// limit name → positive integer.
const (
	SettingLimits         = "limits"
	SettingProviderLimits = "limits_provider"
)

// OperatorLimits are the limits the site's operators set.
func (s *Site) OperatorLimits() map[string]int { return intMap(s.Settings[SettingLimits]) }

// ProviderLimits are the limits the hosting provider set; operators cannot
// change them.
func (s *Site) ProviderLimits() map[string]int { return intMap(s.Settings[SettingProviderLimits]) }

// SetOperatorLimits replaces the operators' limits (empty: none).
func (s *Site) SetOperatorLimits(m map[string]int) { s.setLimits(SettingLimits, m) }

// SetProviderLimits replaces the provider's limits (empty: none).
func (s *Site) SetProviderLimits(m map[string]int) { s.setLimits(SettingProviderLimits, m) }

func (s *Site) setLimits(key string, m map[string]int) {
	if s.Settings == nil {
		s.Settings = map[string]any{}
	}
	if len(m) == 0 {
		delete(s.Settings, key)
		return
	}
	v := make(map[string]any, len(m))
	for k, n := range m {
		v[k] = n
	}
	s.Settings[key] = v
}

// intMap reads a settings object of positive integers as the database
// returns it (JSON numbers: float64) or as code stored it (int); anything
// else is skipped.
func intMap(v any) map[string]int {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return nil
	}
	out := make(map[string]int, len(m))
	for k, x := range m {
		var n float64
		switch x := x.(type) {
		case float64:
			n = x
		case int:
			n = float64(x)
		case int64:
			n = float64(x)
		case json.Number:
			f, err := x.Float64()
			if err != nil {
				continue
			}
			n = f
		default:
			continue
		}
		if n >= 1 && n <= math.MaxInt32*1000 && n == math.Trunc(n) {
			out[k] = int(n)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
