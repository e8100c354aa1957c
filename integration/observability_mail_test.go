package integration

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lectern/lectern/internal/demo"
)

// Without --smtp-url the outbox folder takes the mail. Its log line holds
// the text, with its single-use link, on the embedded default only, where
// a person trying Lectern reads the link there; with PostgreSQL, a
// deployment that forgot --smtp-url, it names the file, the recipient and
// the subject, and no link reaches the log aggregator.
func TestOutboxFolderLogsTheLinkOnlyOnTheEmbeddedDefault(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		ts := startServer(t, b, nil)
		site, _ := admSites(t, ts)
		if err := ts.app.Platform.RequestPasswordReset(t.Context(), site, demo.StudentEmail, time.Now()); err != nil {
			t.Fatal(err)
		}
		var line map[string]any
		eventually(t, 15*time.Second, func() error {
			for _, l := range strings.Split(ts.logs.String(), "\n") {
				var rec map[string]any
				if json.Unmarshal([]byte(l), &rec) == nil && strings.HasPrefix(rec["msg"].(string), "mail written to the outbox folder") && rec["to"] == demo.StudentEmail {
					line = rec
					return nil
				}
			}
			return errors.New("no outbox log line for the reset mail yet")
		})
		if line["file"] == nil || line["subject"] == nil {
			t.Errorf("outbox log line %v; want the file and the subject", line)
		}
		embedded := b.databaseURL == ""
		text, logged := line["text"].(string)
		if logged != embedded || embedded && !strings.Contains(text, "/password/reset?token=") {
			t.Errorf("%s: the mail's text in the log: %v (%.80q); want %v", b.name, logged, text, embedded)
		}
		if !embedded && strings.Contains(ts.logs.String(), "/password/reset?token=") {
			t.Errorf("%s: a reset link is in the log", b.name)
		}
	})
}
