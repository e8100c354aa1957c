package server

import (
	"fmt"
	"net/http"
	"path/filepath"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lectern/lectern/accounts"
	"github.com/lectern/lectern/mail"
	"github.com/lectern/lectern/storage/sqlstore"
)

// buildMail makes the outbox sender: SMTP when --smtp-url names a server,
// else the outbox folder of the embedded default. Enqueued mail wakes it.
func (s *Server) buildMail() error {
	a := s.app
	var transport mail.Transport
	if a.Config.SMTPURL != "" {
		c, err := mail.ParseSMTPURL(a.Config.SMTPURL)
		if err != nil {
			return fmt.Errorf("--smtp-url: %w", err)
		}
		transport = mail.NewSMTP(c)
		s.mailDesc = c.String()
	} else {
		dir := filepath.Join(a.Config.DataDir, "outbox")
		// The mail's text (its links) is logged on SQLite only, the
		// embedded default that one person tries on their machine; a
		// PostgreSQL deployment without --smtp-url logs where the file is.
		embedded := a.Store.Dialect() == sqlstore.SQLite
		d := &mail.Dir{Path: dir, Logger: a.Logger, LogText: embedded}
		if err := d.Check(); err != nil {
			return fmt.Errorf("mail: without --smtp-url (LECTERN_SMTP_URL) account mail is written to %s, which cannot be written: %w (give --smtp-url, or a writable --data-dir)", dir, err)
		}
		if !embedded {
			a.Logger.Warn("no --smtp-url (LECTERN_SMTP_URL): account mail (invitations, password resets, sign-up checks) goes to the outbox folder of this replica only, not to its recipients",
				"folder", dir)
		}
		transport = d
		s.mailDesc = "folder " + dir
	}
	s.mailer = mail.NewSender(a.Store, transport, a.Logger, a.Config.Mail)
	a.Platform.Mail.Wake = s.mailer.Wake
	counter := func(name, help string, f func() float64) prometheus.CounterFunc {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, f)
	}
	s.registry.MustRegister(
		counter("lectern_mail_sent_total", "Account mail messages delivered by this replica.", func() float64 { n, _, _ := s.mailer.Counts(); return float64(n) }),
		counter("lectern_mail_failed_attempts_total", "Failed delivery attempts of this replica (retried with backoff).", func() float64 { _, n, _ := s.mailer.Counts(); return float64(n) }),
		counter("lectern_mail_dead_total", "Messages this replica gave up after their last attempt (kept in the outbox as dead).", func() float64 { _, _, n := s.mailer.Counts(); return float64(n) }),
	)
	return nil
}

// Mailer is the outbox sender, for tests that drain it.
func (s *Server) Mailer() *mail.Sender { return s.mailer }

// mountAccounts mounts the pages that create, join or recover accounts.
func (s *Server) mountAccounts() {
	a := s.app
	h, err := accounts.New(accounts.Options{
		Store: a.Store, Cache: a.Cache, Platform: a.Platform, Sessions: s.sessions, Revoker: s.verifier, Logger: a.Logger,
		Brand: s.brand, Throttle: s.auth.Throttle(),
	})
	if err != nil {
		panic(fmt.Sprintf("account pages: %v", err))
	}
	wh := echo.WrapHandler(h)
	for _, path := range accounts.Paths {
		s.echo.Match([]string{http.MethodGet, http.MethodPost}, path, wh)
	}
}
