package mail_test

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lectern/lectern/mail"
)

// A malformed --smtp-url is refused without its password: url.Parse
// quotes the whole URL in its error.
func TestParseSMTPURLErrorHidesThePassword(t *testing.T) {
	for _, raw := range []string{
		"smtp://u:SMTPSECRET1@mail.example:99x",
		"smtp://u:SMTPSECRET1@mail%zz.example:25",
		"smtps://u:SMTPSECRET1@[::1:465",
	} {
		_, err := mail.ParseSMTPURL(raw)
		if err == nil {
			t.Errorf("ParseSMTPURL(%q) accepted it", raw)
			continue
		}
		if strings.Contains(err.Error(), "SMTPSECRET1") {
			t.Errorf("ParseSMTPURL(%q): %v; the error shows the password", raw, err)
		}
		if !strings.HasPrefix(err.Error(), "mail: SMTP URL: ") {
			t.Errorf("ParseSMTPURL(%q): %v; want the reason after \"mail: SMTP URL: \"", raw, err)
		}
	}
}

// The outbox folder logs a message's text (its single-use link) only when
// told to (the embedded default); otherwise the line names the file, the
// recipient and the subject.
func TestDirLogsTheTextOnlyWhenTold(t *testing.T) {
	for _, logText := range []bool{false, true} {
		var logs bytes.Buffer
		d := &mail.Dir{Path: filepath.Join(t.TempDir(), "outbox"), Logger: slog.New(slog.NewJSONHandler(&logs, nil)), LogText: logText}
		m := outboxRow(t, templates(t), "pat@example.test")
		m.ID, m.CreatedAt = 9, time.Now()
		if err := d.Send(t.Context(), m); err != nil {
			t.Fatal(err)
		}
		line := logs.String()
		for _, want := range []string{"pat@example.test", "Reset your password", ".eml"} {
			if !strings.Contains(line, want) {
				t.Errorf("LogText %v: the log line lacks %q: %s", logText, want, line)
			}
		}
		if got := strings.Contains(line, "token=t0k"); got != logText {
			t.Errorf("LogText %v: the link is in the log: %v\n%s", logText, got, line)
		}
	}
}
