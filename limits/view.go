package limits

import (
	"fmt"
	"sort"

	"github.com/lectern/lectern/tenant"
)

// View is one limit as a site's operators see it (admin API, admin area).
type View struct {
	Limit
	// Default is the platform default, Ceiling the most the operators may
	// set, Value what is in force at the site.
	Default, Ceiling, Value int
	// Override is the operators' value (0: none); Provider the hosting
	// provider's (0: none), which the operators cannot change.
	Override, Provider int
}

// Views lists every limit at site.
func (c *Config) Views(site *tenant.Site) []View {
	out := make([]View, 0, len(All))
	for _, l := range All {
		v := View{Limit: l, Default: c.Default(l.Name), Ceiling: c.Ceiling(l.Name), Value: c.ForSite(site, l.Name)}
		if site != nil {
			v.Override = site.OperatorLimits[string(l.Name)]
			v.Provider = site.ProviderLimits[string(l.Name)]
		}
		out = append(out, v)
	}
	return out
}

// CheckOperatorSet checks the operators' new overrides (the complete set:
// a limit left out goes back to the platform default) for site: every
// name a limit, every value from 1 to its ceiling, none of a limit the
// provider set. A value the site holds already may be sent back as it is,
// so that what was read can be written again. It returns every problem,
// by name.
func (c *Config) CheckOperatorSet(site *tenant.Site, next map[string]int) []*ValueError {
	if len(next) > len(All) {
		return []*ValueError{{"", fmt.Sprintf("names %d limits; there are %d", len(next), len(All))}}
	}
	var errs []*ValueError
	for name, v := range next {
		if len(name) > 64 {
			// Errors quote at most a short name, never the input whole.
			errs = append(errs, &ValueError{name[:64] + "...", "no such limit"})
			continue
		}
		if site != nil && site.OperatorLimits[name] == v && v > 0 {
			continue // unchanged
		}
		if site != nil && site.ProviderLimits[name] > 0 {
			errs = append(errs, &ValueError{name, "is set for this site by the hosting provider; ask them to change it"})
			continue
		}
		if err := c.CheckOperator(name, v); err != nil {
			errs = append(errs, err.(*ValueError))
		}
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Name < errs[j].Name })
	return errs
}
