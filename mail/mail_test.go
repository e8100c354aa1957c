package mail_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lectern/lectern/mail"
	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/sqlstore"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
)

func templates(t *testing.T) *mail.Templates {
	t.Helper()
	tpl, err := mail.NewTemplates()
	if err != nil {
		t.Fatal(err)
	}
	return tpl
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// Every kind renders a one-line subject, a text part and an HTML part with
// the link, and the HTML escapes what the data holds.
func TestTemplatesRenderEveryKind(t *testing.T) {
	tpl := templates(t)
	d := mail.Data{SiteName: `Ada's <script>alert(1)</script> School`, SiteOrigin: "https://ada.example", To: "p@example.test",
		Name: "Pat", Link: "https://ada.example/x?token=abc&y=1", SignInLink: "https://ada.example/login",
		ResetLink: "https://ada.example/password/forgot", Role: "lecturer", InvitedBy: "Ada", NewEmail: "new@example.test",
		ValidDays: 7, ValidHours: 24, ValidMinutes: 30}
	for _, kind := range []string{mail.KindInvitation, mail.KindSignUpVerify, mail.KindSignUpExists, mail.KindPasswordReset,
		mail.KindEmailChangeVerify, mail.KindEmailChangeNotice} {
		t.Run(kind, func(t *testing.T) {
			subject, text, html, err := tpl.Render(kind, d)
			if err != nil {
				t.Fatal(err)
			}
			if subject == "" || strings.ContainsAny(subject, "\r\n") || !strings.Contains(subject, "Ada's") {
				t.Errorf("subject %q", subject)
			}
			link := d.Link
			if kind == mail.KindSignUpExists || kind == mail.KindEmailChangeNotice {
				link = d.ResetLink
			}
			if !strings.Contains(text, link) {
				t.Errorf("the text part lacks the link %s:\n%s", link, text)
			}
			if strings.Contains(html, "<script>") || !strings.Contains(html, "&lt;script&gt;") {
				t.Errorf("the HTML part does not escape the site name:\n%s", html)
			}
			if !strings.Contains(html, strings.ReplaceAll(link, "&", "&amp;")) {
				t.Errorf("the HTML part lacks the link %s", link)
			}
			if strings.Contains(text+html, "<no value>") {
				t.Errorf("a template uses a field it was not given")
			}
		})
	}
	if _, _, _, err := tpl.Render("nonsense", d); err == nil {
		t.Error("an unknown kind rendered")
	}
}

func TestParseSMTPURL(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    string
		user    string
		pass    string
		tls     bool
		require bool
		bad     bool
	}{
		{in: "smtp://mail.example:2525", want: "smtp://mail.example:2525"},
		{in: "smtp://mail.example", want: "smtp://mail.example:25"},
		{in: "smtp://u%40x:p%3Ass@mail.example:587?starttls=required", want: "smtp://mail.example:587", user: "u@x", pass: "p:ss", require: true},
		{in: "smtps://u:s3cret@mail.example", want: "smtps://mail.example:465", user: "u", pass: "s3cret", tls: true},
		{in: "smtps://mail.example?starttls=required", bad: true},
		{in: "smtp://mail.example?tls=off", bad: true},
		{in: "http://mail.example", bad: true},
		{in: "smtp://:25", bad: true},
		{in: "smtp://mail.example:0", bad: true},
	} {
		got, err := mail.ParseSMTPURL(c.in)
		if c.bad {
			if err == nil {
				t.Errorf("%s accepted: %+v", c.in, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if got.String() != c.want || got.Username != c.user || got.Password != c.pass || got.ImplicitTLS != c.tls || got.RequireSTARTTLS != c.require {
			t.Errorf("%s: %+v (%s)", c.in, got, got.String())
		}
		if c.pass != "" && strings.Contains(got.String(), c.pass) {
			t.Errorf("%s: String shows the password", c.in)
		}
	}
}

func outboxRow(t *testing.T, tpl *mail.Templates, to string) *storage.OutboxMessage {
	t.Helper()
	m, err := tpl.Compose(mail.KindPasswordReset, 0, mail.From{Name: "Demo Academy", Address: "no-reply@lectern.test"},
		mail.Data{SiteName: "Demo Academy", SiteOrigin: "http://localhost:8080", To: to, Name: "Pat",
			Link: "http://localhost:8080/password/reset?token=t0k", ValidMinutes: 30})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// A message goes out as a person's mail program shows it: from the site's
// name, plain text with an HTML alternative, no List-Unsubscribe and no
// tracking.
func TestSMTPDeliversToARealServer(t *testing.T) {
	mp := mailpitServer(t)
	cfg, err := mail.ParseSMTPURL(mp.SMTPURL())
	if err != nil {
		t.Fatal(err)
	}
	to := fmt.Sprintf("smtp-%d@example.test", time.Now().UnixNano())
	m := outboxRow(t, templates(t), to)
	m.ID, m.CreatedAt = 42, time.Now()
	if err := mail.NewSMTP(cfg).Send(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	got, err := mp.WaitFor(ctx, to, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got.From.Name != "Demo Academy" || got.From.Address != "no-reply@lectern.test" {
		t.Errorf("From = %+v", got.From)
	}
	if got.Subject != m.Subject || !strings.Contains(got.Text, "password/reset?token=t0k") || !strings.Contains(got.HTML, "Choose a new password") {
		t.Errorf("message: subject %q\ntext %s\nhtml %s", got.Subject, got.Text, got.HTML)
	}
	if _, ok := got.Headers["List-Unsubscribe"]; ok {
		t.Error("a transactional message carries List-Unsubscribe")
	}
	if !strings.HasPrefix(strings.Join(got.Headers["Message-Id"], ""), "<lectern.42.") {
		t.Errorf("Message-Id %v is not derived from the outbox row", got.Headers["Message-Id"])
	}
	if strings.Contains(got.HTML, "<img") {
		t.Error("the HTML part has an image (a tracking pixel or remote content)")
	}

	// starttls=required never sends in clear text: this server offers no
	// STARTTLS, so nothing is delivered.
	strict, _ := mail.ParseSMTPURL(mp.SMTPURL() + "?starttls=required")
	to2 := "strict-" + to
	if err := mail.NewSMTP(strict).Send(t.Context(), outboxRow(t, templates(t), to2)); err == nil {
		t.Fatal("starttls=required sent over a connection without TLS")
	}
	time.Sleep(300 * time.Millisecond)
	if msgs, _ := mp.To(t.Context(), to2); len(msgs) != 0 {
		t.Fatalf("starttls=required delivered %d message(s) in clear text", len(msgs))
	}
}

// Without an SMTP server, messages are .eml files a mail program opens.
func TestDirWritesEMLFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "outbox")
	m := outboxRow(t, templates(t), "pat@example.test")
	m.ID, m.CreatedAt = 7, time.Now()
	if err := (&mail.Dir{Path: dir, Logger: testLogger(t)}).Send(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.eml"))
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	b, _ := os.ReadFile(files[0])
	for _, want := range []string{"To: <pat@example.test>", "multipart/alternative", "text/plain", "text/html", "Subject: Reset your password",
		"\nhttp://localhost:8080/password/reset?token=t0k\n"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the .eml lacks %q:\n%s", want, b)
		}
	}
}

// The outbox delivers through a server that was down when the messages
// were written: attempts fail, are retried with backoff, and succeed once
// it is back. Sent rows lose their bodies and are pruned after the
// retention; a message that keeps failing is dead-lettered.
func TestSenderRetriesUntilTheServerIsBack(t *testing.T) {
	mp := mailpitServer(t)
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		ctx := t.Context()
		tpl := templates(t)
		cfg, _ := mail.ParseSMTPURL(mp.SMTPURL())
		cfg.Timeout = 2 * time.Second
		// The clock starts just after the enqueue below.
		now := time.Now().Add(time.Second)
		clock := func() time.Time { return now }
		sender := mail.NewSender(s, mail.NewSMTP(cfg), testLogger(t), &mail.SenderOptions{
			Backoff: time.Minute, MaxAttempts: 3, Now: clock, SentRetention: time.Hour, DeadRetention: 2 * time.Hour})
		to := fmt.Sprintf("retry-%s-%d@example.test", s.Dialect(), time.Now().UnixNano())
		if err := s.EnqueueMail(ctx, outboxRow(t, tpl, to)); err != nil {
			t.Fatal(err)
		}
		if err := mp.Stop(); err != nil {
			t.Fatal(err)
		}
		if n, err := sender.Drain(ctx); err != nil || n != 0 {
			t.Fatalf("Drain with the server down = %d, %v", n, err)
		}
		if _, failed, _ := sender.Counts(); failed != 1 {
			t.Fatalf("failed attempts %d, want 1", failed)
		}
		// Not due again until its backoff has passed.
		if n, _ := sender.Drain(ctx); n != 0 {
			t.Fatal("a failed message was retried before its backoff")
		}
		if err := mp.Restart(); err != nil {
			t.Fatal(err)
		}
		now = now.Add(2 * time.Minute)
		if n, err := sender.Drain(ctx); err != nil || n != 1 {
			t.Fatalf("Drain after the server came back = %d, %v; want 1", n, err)
		}
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if _, err := mp.WaitFor(wctx, to, 1); err != nil {
			t.Fatal(err)
		}
		if waiting, dead, err := s.MailCounts(ctx); err != nil || waiting != 0 || dead != 0 {
			t.Fatalf("outbox after delivery: waiting %d dead %d (%v)", waiting, dead, err)
		}

		// A message that never gets through is given up after MaxAttempts.
		deadTo := "dead-" + to
		bad := outboxRow(t, tpl, deadTo)
		bad.ToAddr = "not an address"
		if err := s.EnqueueMail(ctx, bad); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 3; i++ {
			_, _ = sender.Drain(ctx)
			now = now.Add(10 * time.Minute)
		}
		if _, dead, _ := s.MailCounts(ctx); dead != 1 {
			t.Fatalf("dead messages %d after 3 failed attempts; want 1", dead)
		}
		if _, _, dead := sender.Counts(); dead != 1 {
			t.Fatalf("sender counted %d dead", dead)
		}

		// Rows do not pile up: sent ones go after an hour, dead ones after two.
		now = now.Add(61 * time.Minute)
		if n, err := sender.Prune(ctx); err != nil || n != 1 {
			t.Fatalf("Prune after the sent retention = %d, %v; want the sent row", n, err)
		}
		now = now.Add(2 * time.Hour)
		if n, err := sender.Prune(ctx); err != nil || n != 1 {
			t.Fatalf("Prune after the dead retention = %d, %v; want the dead row", n, err)
		}
	})
}

// Two senders (two replicas) draining one PostgreSQL outbox at the same
// time deliver every message exactly once.
func TestTwoSendersDeliverEachMessageOnce(t *testing.T) {
	mp := mailpitServer(t)
	s := sqltest.Postgres(t)
	ctx := t.Context()
	tpl := templates(t)
	cfg, _ := mail.ParseSMTPURL(mp.SMTPURL())
	prefix := fmt.Sprintf("once-%d", time.Now().UnixNano())
	const n = 60
	for i := 0; i < n; i++ {
		if err := s.EnqueueMail(ctx, outboxRow(t, tpl, fmt.Sprintf("%s-%02d@example.test", prefix, i))); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	counts := make([]int, 2)
	for i := range 2 {
		sender := mail.NewSender(s, mail.NewSMTP(cfg), testLogger(t), &mail.SenderOptions{Batch: 5})
		wg.Go(func() {
			got, err := sender.Drain(ctx)
			if err != nil {
				t.Error(err)
			}
			counts[i] = got
		})
	}
	wg.Wait()
	if counts[0]+counts[1] != n {
		t.Fatalf("the senders delivered %v, %d in all; want %d", counts, counts[0]+counts[1], n)
	}
	if counts[0] == 0 || counts[1] == 0 {
		t.Logf("one sender took every message (%v); the claims did not overlap either way", counts)
	}
	time.Sleep(500 * time.Millisecond)
	all, err := mp.Messages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, m := range all {
		for _, a := range m.To {
			if strings.HasPrefix(a.Address, prefix) {
				per[a.Address]++
			}
		}
	}
	if len(per) != n {
		t.Fatalf("%d of %d recipients got mail", len(per), n)
	}
	for addr, c := range per {
		if c != 1 {
			t.Errorf("%s got %d copies", addr, c)
		}
	}
}
