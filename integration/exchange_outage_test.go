package integration

import (
	"net/url"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/lectern/lectern/internal/demo"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
	"github.com/lectern/lectern/storage/storagetest"
)

// Issue 15: a 503 at the code exchange burnt the code (it was taken from
// the cache before the database write), so the retry the 503 asks for got
// invalid_grant. Now the database failing at the exchange leaves the code
// usable: the retry within its lifetime gets tokens, and the code is still
// single use.
func TestCodeExchangeRetryAfterDatabaseFailure(t *testing.T) {
	for _, withRedis := range []bool{false, true} {
		name := map[bool]string{false: "memory cache", true: "redis"}[withRedis]
		t.Run(name, func(t *testing.T) {
			base := sqltest.PostgresSchemaURL(t)
			proxy := newFaultProxy(t, "127.0.0.1:5432")
			u, _ := url.Parse(base)
			u.Host = proxy.addr()
			b := backend{name: "postgres-via-proxy", databaseURL: u.String()}
			if withRedis {
				b.redisURL = storagetest.RedisURL(t)
			}
			ts := startServer(t, b, nil)

			// One exchange first, so the client is cached and the outage
			// hits the grant's insert, not the client lookup.
			warm := newFlow(t, ts, ts.academy(), demo.MemberClientID, "openid", "account:read")
			if _, err := warm.exchange(warm.authorize(demo.StudentEmail, demo.StudentPassword)); err != nil {
				t.Fatal(err)
			}
			f := newFlow(t, ts, ts.academy(), demo.MemberClientID, "openid", "account:read")
			code := f.authorize(demo.StudentEmail, demo.StudentPassword)

			proxy.cut()
			_, err := f.exchange(code)
			var re *oauth2.RetrieveError
			if !asRetrieveError(err, &re) || re.Response.StatusCode != 503 || re.ErrorCode != "temporarily_unavailable" {
				t.Fatalf("exchange with the database down: %v; want 503 temporarily_unavailable", err)
			}
			proxy.restore()

			// The pool finds its dead connections on first use, so the
			// first retries may meet 503 again: none of them may burn the
			// code either.
			var tok *oauth2.Token
			eventually(t, 10*time.Second, func() error {
				var err error
				tok, err = f.exchange(code)
				if err != nil && oauthErrorCode(err) != "temporarily_unavailable" {
					t.Fatalf("retry after the 503, within the code's lifetime: %v; want tokens", err)
				}
				return err
			})
			if c, _, body := f.userinfo(tok.AccessToken); c != 200 {
				t.Fatalf("userinfo with the retry's token: %d %v", c, body)
			}
			// Still single use.
			if _, err := f.exchange(code); oauthErrorCode(err) != "invalid_grant" {
				t.Fatalf("third use of the code: %v; want invalid_grant", err)
			}
			if c, _, _ := f.userinfo(tok.AccessToken); c != 401 {
				t.Fatalf("the retry's token after the code was replayed: %d; want 401", c)
			}
		})
	}
}

// Concurrent redemptions of one code: exactly one gets tokens, every other
// gets invalid_grant (never a 5xx), on every backend.
func TestCodeConcurrentRedemptionOneWinner(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		for round := range 3 {
			f := newFlow(t, ts, ts.academy(), demo.MemberClientID, "openid", "account:read")
			code := f.authorize(demo.StudentEmail, demo.StudentPassword)
			// Few enough for the client's rate limit (30 a second).
			time.Sleep(time.Second)
			const n = 4
			var (
				wg    sync.WaitGroup
				start = make(chan struct{})
				errs  = make([]error, n)
			)
			for i := range n {
				wg.Go(func() {
					<-start
					_, errs[i] = f.exchange(code)
				})
			}
			close(start)
			wg.Wait()
			wins := 0
			for i, err := range errs {
				switch {
				case err == nil:
					wins++
				case oauthErrorCode(err) != "invalid_grant":
					t.Errorf("round %d, redemption %d: %v; want tokens or invalid_grant", round, i, err)
				}
			}
			if wins != 1 {
				t.Fatalf("round %d: %d of %d concurrent redemptions got tokens; want exactly 1", round, wins, n)
			}
		}
	})
}

func asRetrieveError(err error, re **oauth2.RetrieveError) bool {
	var e *oauth2.RetrieveError
	if err == nil {
		return false
	}
	ok := false
	if x, is := err.(*oauth2.RetrieveError); is {
		e, ok = x, true
	}
	*re = e
	return ok
}
