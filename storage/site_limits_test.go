package storage

import (
	"encoding/json"
	"maps"
	"testing"
)

// Limits survive the trip through the settings JSON (numbers come back
// as float64), and values that are not positive whole numbers are
// ignored rather than applied.
func TestSiteLimitSettings(t *testing.T) {
	var s Site
	s.SetOperatorLimits(map[string]int{"token_per_client": 45})
	s.SetProviderLimits(map[string]int{"mcp_requests_per_site": 7})
	raw, err := json.Marshal(s.Settings)
	if err != nil {
		t.Fatal(err)
	}
	var back Site
	if err := json.Unmarshal(raw, &back.Settings); err != nil {
		t.Fatal(err)
	}
	if got := back.OperatorLimits(); !maps.Equal(got, map[string]int{"token_per_client": 45}) {
		t.Errorf("operator limits after JSON: %v", got)
	}
	tv := back.Tenant()
	if tv.ProviderLimits["mcp_requests_per_site"] != 7 || tv.OperatorLimits["token_per_client"] != 45 {
		t.Errorf("the request path's view: %v %v", tv.ProviderLimits, tv.OperatorLimits)
	}
	back.Settings[SettingLimits] = map[string]any{"a": -1.0, "b": 2.5, "c": "7", "d": 0.0, "e": 3.0, "f": json.Number("4")}
	if got := back.OperatorLimits(); !maps.Equal(got, map[string]int{"e": 3, "f": 4}) {
		t.Errorf("odd values: %v, want only e and f", got)
	}
	back.SetOperatorLimits(nil)
	if _, ok := back.Settings[SettingLimits]; ok || back.OperatorLimits() != nil {
		t.Error("clearing the operators' limits left them in the settings")
	}
}
