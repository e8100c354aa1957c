package limits

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lectern/lectern/tenant"
)

func TestEveryLimitIsDescribed(t *testing.T) {
	seen := map[Name]bool{}
	for _, l := range All {
		if seen[l.Name] {
			t.Errorf("%s listed twice", l.Name)
		}
		seen[l.Name] = true
		if l.Title == "" || l.Unit == "" || l.Flag == "" || l.Default < 1 {
			t.Errorf("%s is not fully described: %+v", l.Name, l)
		}
		if got, ok := Lookup(string(l.Name)); !ok || got.Name != l.Name {
			t.Errorf("Lookup(%s) = %v, %v", l.Name, got, ok)
		}
	}
	if _, ok := Lookup("nonsense"); ok {
		t.Error("Lookup found a limit that does not exist")
	}
}

func TestValuePrecedence(t *testing.T) {
	c := &Config{Defaults: map[Name]int{TokenPerClient: 50}, CeilingFactor: 4}
	var nilConfig *Config
	if got := nilConfig.Default(TokenPerClient); got != 30 {
		t.Errorf("nil config: default %d, want the built-in 30", got)
	}
	if got := c.Default(TokenPerClient); got != 50 {
		t.Errorf("flag default %d, want 50", got)
	}
	if got := c.Ceiling(TokenPerClient); got != 200 {
		t.Errorf("ceiling %d, want 4 x 50", got)
	}
	if got := c.Ceiling(LoginFailuresPerAccountIP); got != 10 {
		t.Errorf("sign-in ceiling %d, want the default: operators may only tighten", got)
	}
	for _, tc := range []struct {
		name string
		site *tenant.Site
		want int
	}{
		{"no site", nil, 50},
		{"no overrides", &tenant.Site{}, 50},
		{"operators", &tenant.Site{OperatorLimits: map[string]int{"token_per_client": 80}}, 80},
		{"operators above today's ceiling", &tenant.Site{OperatorLimits: map[string]int{"token_per_client": 900}}, 200},
		{"provider wins", &tenant.Site{OperatorLimits: map[string]int{"token_per_client": 80}, ProviderLimits: map[string]int{"token_per_client": 5000}}, 5000},
		{"provider may lower", &tenant.Site{ProviderLimits: map[string]int{"token_per_client": 3}}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := c.ForSite(tc.site, TokenPerClient); got != tc.want {
				t.Errorf("ForSite = %d, want %d", got, tc.want)
			}
			ctx := context.Background()
			if tc.site != nil {
				ctx = tenant.WithSite(ctx, tc.site)
			}
			if n, per := c.Rate(ctx, TokenPerClient); n != tc.want || per != time.Second {
				t.Errorf("Rate = %d per %s, want %d per 1s", n, per, tc.want)
			}
		})
	}
}

func TestCheckOperatorSet(t *testing.T) {
	c := &Config{}
	site := &tenant.Site{
		OperatorLimits: map[string]int{"register_per_ip": 20},
		ProviderLimits: map[string]int{"mcp_requests_per_site": 5},
	}
	if errs := c.CheckOperatorSet(site, map[string]int{"token_per_client": 300, "register_per_ip": 20}); len(errs) != 0 {
		t.Errorf("values up to the ceiling refused: %v", errs)
	}
	errs := c.CheckOperatorSet(site, map[string]int{
		"token_per_client":              301, // over 10 x 30
		"mcp_requests_per_site":         6,   // the provider's
		"login_failures_per_account_ip": 11,  // may only tighten
		"nonsense":                      1,
		"graphql_cost_per_site":         0,
	})
	want := []string{"graphql_cost_per_site", "login_failures_per_account_ip", "mcp_requests_per_site", "nonsense", "token_per_client"}
	if len(errs) != len(want) {
		t.Fatalf("errors %v, want one for each of %v", errs, want)
	}
	for i, e := range errs {
		if e.Name != want[i] || e.Reason == "" {
			t.Errorf("error %d: %v, want one about %s", i, e, want[i])
		}
	}
	long := strings.Repeat("x", 10_000)
	if errs := c.CheckOperatorSet(site, map[string]int{long: 1}); len(errs) != 1 || len(errs[0].Name) > 70 {
		t.Errorf("an unknown 10 KB name: %d errors, the first naming %d bytes; want one naming a short excerpt", len(errs), len(errs[0].Name))
	}
	many := map[string]int{}
	for i := range 1000 {
		many[fmt.Sprint("n", i)] = 1
	}
	if errs := c.CheckOperatorSet(site, many); len(errs) != 1 {
		t.Errorf("1,000 names: %d errors, want one", len(errs))
	}
	if errs := c.CheckOperatorSet(site, map[string]int{"login_failures_per_account_ip": 3}); len(errs) != 0 {
		t.Errorf("tightening a sign-in limit refused: %v", errs)
	}
}

// A site's budget admits its value per period; beyond it a request waits
// for room up to MaxWait, and is refused after MaxWait when there is none
// that soon. Another site's budget is its own.
func TestBudgets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &Config{Defaults: map[Name]int{MCPRequestsPerSite: 10}}
		b := NewBudgets(c, MCPRequestsPerSite)
		siteA := tenant.WithSite(context.Background(), &tenant.Site{ID: 1})
		siteB := tenant.WithSite(context.Background(), &tenant.Site{ID: 2, ProviderLimits: map[string]int{"mcp_requests_per_site": 2}})
		start := time.Now()
		for i := range 10 {
			if ok, _ := b.Take(siteA, 1); !ok {
				t.Fatalf("request %d of a full budget of 10 refused", i)
			}
		}
		if time.Since(start) != 0 {
			t.Fatal("requests within the budget waited")
		}
		// The 11th waits for the next unit (100 ms at 10/s) and goes on.
		if ok, _ := b.Take(siteA, 1); !ok || time.Since(start) != 100*time.Millisecond {
			t.Fatalf("11th request: ok %v after %s; want admitted after 100ms", ok, time.Since(start))
		}
		// Five units are 500 ms away: refused after MaxWait, nothing spent.
		before := time.Now()
		ok, retry := b.Take(siteA, 5)
		if ok || time.Since(before) != MaxWait || retry != 500*time.Millisecond-MaxWait {
			t.Fatalf("a request 500ms beyond the budget: ok %v after %s, retry %s", ok, time.Since(before), retry)
		}
		if ok, _ := b.Take(siteB, 2); !ok {
			t.Fatal("site B was refused because site A spent its budget")
		}
		before = time.Now()
		if ok, _ := b.Take(siteB, 2); ok || time.Since(before) != MaxWait {
			t.Fatal("site B's own override of 2 was not applied")
		}
		time.Sleep(time.Second)
		if ok, _ := b.Take(siteA, 50); !ok {
			t.Fatal("a cost above the whole budget is never admitted; it should cost the whole budget")
		}
		if ok, _ := b.Take(context.Background(), 1000); !ok {
			t.Fatal("a request without a site was charged")
		}
		// A caller that gives up while waiting spends nothing.
		ctx, cancel := context.WithTimeout(siteA, 10*time.Millisecond)
		defer cancel()
		if ok, _ := b.Take(ctx, 1); ok {
			t.Fatal("a request whose context ended was admitted")
		}
	})
}

// At the default budgets a lone client, one request at a time, is slowed
// at most, never refused: the interval between two units is within
// MaxWait.
func TestDefaultBudgetsNeverRefuseALoneClient(t *testing.T) {
	for _, n := range []Name{TokenPerSite, LoginChecksPerSite, GraphQLCostPerSite, MCPRequestsPerSite} {
		l := mustLookup(n)
		if interval := l.Per / time.Duration(l.Default); interval > MaxWait {
			t.Errorf("%s: one unit every %s by default, longer than the %s a request may wait", n, interval, MaxWait)
		}
	}
}
