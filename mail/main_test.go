package mail_test

import (
	"os"
	"sync"
	"testing"

	"github.com/lectern/lectern/internal/mailpit"
)

// One Mailpit for the package, on free loopback ports, started by the
// first test that needs it.
var (
	mpOnce sync.Once
	mp     *mailpit.Server
	mpErr  error
)

func mailpitServer(t *testing.T) *mailpit.Server {
	t.Helper()
	mpOnce.Do(func() { mp, mpErr = mailpit.Start(0, 0) })
	if mpErr != nil {
		if mailpit.Required() {
			t.Fatalf("Mailpit is required (LECTERN_REQUIRE_SERVICES=1): %v", mpErr)
		}
		t.Skipf("skipping: no Mailpit (%v)", mpErr)
	}
	if err := mp.Restart(); err != nil { // a test may have left it stopped
		t.Fatal(err)
	}
	return mp
}

func TestMain(m *testing.M) {
	code := m.Run()
	if mp != nil {
		mp.Close()
	}
	os.Exit(code)
}
