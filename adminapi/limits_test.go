package adminapi

import (
	"slices"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/lectern/lectern/limits"
)

// The document's LimitName enum is the list of limits: a limit added to
// package limits must be named in the API too, and nothing else may be.
func TestLimitNamesAreTheLimits(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Enum []string `yaml:"enum"`
			} `yaml:"schemas"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(SourceYAML, &doc); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, l := range limits.All {
		want = append(want, string(l.Name))
	}
	if got := doc.Components.Schemas["LimitName"].Enum; !slices.Equal(got, want) {
		t.Fatalf("LimitName enum %v; want the limits, in order: %v", got, want)
	}
}
