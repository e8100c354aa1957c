package logtest_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/lectern/lectern/internal/logtest"
)

func TestBufferKeepsWhatWasLogged(t *testing.T) {
	log, buf := logtest.New(t)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { log.Warn("from a goroutine", "i", i) })
	}
	wg.Wait()
	log.Debug("debug lines count too")
	got := buf.String()
	if n := strings.Count(got, "level=WARN msg=\"from a goroutine\""); n != 8 {
		t.Errorf("%d goroutine lines in the buffer, want 8:\n%s", n, got)
	}
	if !strings.Contains(got, "level=DEBUG") {
		t.Errorf("the debug line is missing:\n%s", got)
	}
}
