package throttle

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/lectern/lectern/authserver/password"
	"github.com/lectern/lectern/storage/cache"
	"github.com/lectern/lectern/tenant"
)

var testParams = password.Params{Time: 1, Memory: 64, Threads: 1, KeyLen: 16, SaltLen: 8}

// Verify is the sign-in's check for the pages that ask for a current
// password: wrong ones are counted with the sign-in form's (the same
// keys), the eleventh attempt of a pair is refused unchecked whatever the
// password, another address is still checked, and the right password
// gives the pair its slots back.
func TestVerifyCountsWithSignIn(t *testing.T) {
	mem := cache.NewMemory(nil)
	th := New(Options{Cache: mem, Logger: slog.New(slog.DiscardHandler)})
	site := &tenant.Site{ID: 7}
	ctx := tenant.WithSite(context.Background(), site)
	hash, err := password.Hash("right-password", testParams)
	if err != nil {
		t.Fatal(err)
	}
	const email, ip = "Pat@Example.test", "192.0.2.1"

	// Five failures through Verify, five through the sign-in's steps.
	for range 5 {
		if refusal, _, err := th.Verify(ctx, site, email, ip, "wrong", hash); refusal != nil || !errors.Is(err, ErrMismatch) {
			t.Fatalf("a wrong password: %+v %v; want ErrMismatch", refusal, err)
		}
		a := th.Attempt(ctx, site, "pat@example.test", ip)
		if refusal, err := th.Admit(ctx, a); refusal != nil || err != nil {
			t.Fatalf("admit: %+v %v", refusal, err)
		}
		if refusal, err := th.Check(ctx, a, "wrong", hash); refusal != nil || !errors.Is(err, password.ErrMismatch) {
			t.Fatalf("check: %+v %v", refusal, err)
		}
		th.Failed(ctx, a)
	}
	refusal, _, err := th.Verify(ctx, site, email, ip, "right-password", hash)
	if err != nil || refusal == nil || refusal.Status != http.StatusTooManyRequests || refusal.Reason != "account_ip" || refusal.RetryAfter() != "900" {
		t.Fatalf("the right password after ten failures: %+v %v; want 429 account_ip, Retry-After 900", refusal, err)
	}
	if refusal, _, err := th.Verify(ctx, site, email, "192.0.2.99", "right-password", hash); refusal != nil || err != nil {
		t.Fatalf("the owner from another address: %+v %v; want checked and right", refusal, err)
	}
}

func TestAccountWait(t *testing.T) {
	for _, tc := range []struct {
		failures, ceiling int
		want              time.Duration
	}{
		{100, 100, time.Minute},
		{199, 100, time.Minute},
		{200, 100, 2 * time.Minute},
		{400, 100, 8 * time.Minute},
		{500, 100, 15 * time.Minute},
		{10_000, 100, 15 * time.Minute},
	} {
		if got := accountWait(tc.failures, tc.ceiling); got != tc.want {
			t.Errorf("accountWait(%d, %d) = %s; want %s", tc.failures, tc.ceiling, got, tc.want)
		}
	}
}
