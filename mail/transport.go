package mail

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"

	"github.com/lectern/lectern/storage"
)

// Transport delivers one message. An error means it was not delivered (as
// far as the transport knows) and may be tried again.
type Transport interface {
	Send(ctx context.Context, m *storage.OutboxMessage) error
}

// message builds the MIME message of an outbox row: plain text with an
// HTML alternative, a Message-ID derived from the row (so that a message
// delivered twice after a crash is recognisably the same one), no tracking
// and no List-Unsubscribe (these are transactional messages).
func message(m *storage.OutboxMessage, opts ...gomail.MsgOption) (*gomail.Msg, error) {
	msg := gomail.NewMsg(append([]gomail.MsgOption{gomail.WithNoDefaultUserAgent()}, opts...)...)
	// Not FromFormat: it pastes the name between quotes unescaped, so a
	// name with a backslash or a quote failed every message of the site.
	from, err := fromHeader(m.FromName, m.FromAddr)
	if err != nil {
		return nil, fmt.Errorf("mail: sender %q: %w", m.FromAddr, err)
	}
	msg.FromMailAddress(from)
	if err := msg.To(m.ToAddr); err != nil {
		return nil, fmt.Errorf("mail: recipient: %w", err)
	}
	msg.Subject(m.Subject)
	msg.SetDate()
	domain := "lectern.invalid"
	if _, d, ok := strings.Cut(m.FromAddr, "@"); ok && d != "" {
		domain = d
	}
	msg.SetMessageIDWithValue(fmt.Sprintf("lectern.%d.%d@%s", m.ID, m.CreatedAt.Unix(), domain))
	msg.SetBodyString(gomail.TypeTextPlain, m.TextBody)
	msg.AddAlternativeString(gomail.TypeTextHTML, m.HTMLBody)
	return msg, nil
}

// SMTPConfig is an SMTP server from --smtp-url.
type SMTPConfig struct {
	Host     string
	Port     int
	Username string
	Password string
	// ImplicitTLS: smtps:// (TLS from the first byte).
	ImplicitTLS bool
	// RequireSTARTTLS: never send in clear text (smtp://...?starttls=required).
	RequireSTARTTLS bool
	// Timeout bounds connecting and each command (default 30 s).
	Timeout time.Duration
}

// ParseSMTPURL reads smtp://[user:pass@]host[:port][?starttls=required]
// (STARTTLS whenever the server offers it; port 25 by default) or
// smtps://[user:pass@]host[:port] (implicit TLS; port 465 by default).
func ParseSMTPURL(raw string) (*SMTPConfig, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse quotes the whole URL in its error, password included;
		// keep only its reason (as the Redis URL's parser does).
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("mail: SMTP URL: %w", err)
	}
	c := &SMTPConfig{Host: u.Hostname(), Timeout: 30 * time.Second}
	switch u.Scheme {
	case "smtp":
		c.Port = 25
	case "smtps":
		c.Port, c.ImplicitTLS = 465, true
	default:
		return nil, fmt.Errorf("mail: SMTP URL must start with smtp:// or smtps://, not %q", u.Scheme+"://")
	}
	if c.Host == "" {
		return nil, errors.New("mail: SMTP URL has no host")
	}
	if p := u.Port(); p != "" {
		if c.Port, err = strconv.Atoi(p); err != nil || c.Port <= 0 || c.Port > 65535 {
			return nil, fmt.Errorf("mail: SMTP URL port %q", p)
		}
	}
	if u.User != nil {
		c.Username = u.User.Username()
		c.Password, _ = u.User.Password()
	}
	for k, v := range u.Query() {
		switch {
		case k == "starttls" && len(v) == 1 && v[0] == "required":
			if c.ImplicitTLS {
				return nil, errors.New("mail: starttls=required is for smtp://; smtps:// is TLS already")
			}
			c.RequireSTARTTLS = true
		case k == "starttls" && len(v) == 1 && v[0] == "opportunistic":
		default:
			return nil, fmt.Errorf("mail: SMTP URL option %s=%s is unknown (starttls=required is the one option)", k, strings.Join(v, ","))
		}
	}
	return c, nil
}

// String shows the server without its password.
func (c *SMTPConfig) String() string {
	scheme := "smtp"
	if c.ImplicitTLS {
		scheme = "smtps"
	}
	return scheme + "://" + net.JoinHostPort(c.Host, strconv.Itoa(c.Port))
}

// SMTP delivers through an SMTP server, one connection per batch.
type SMTP struct {
	cfg *SMTPConfig
}

// NewSMTP returns the SMTP transport of c.
func NewSMTP(c *SMTPConfig) *SMTP { return &SMTP{cfg: c} }

func (s *SMTP) client() (*gomail.Client, error) {
	c := s.cfg
	opts := []gomail.Option{gomail.WithPort(c.Port), gomail.WithTimeout(c.Timeout)}
	switch {
	case c.ImplicitTLS:
		opts = append(opts, gomail.WithSSL())
	case c.RequireSTARTTLS:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	}
	if c.Username != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(c.Username), gomail.WithPassword(c.Password))
	}
	return gomail.NewClient(c.Host, opts...)
}

// Send implements Transport.
func (s *SMTP) Send(ctx context.Context, m *storage.OutboxMessage) error {
	msg, err := message(m)
	if err != nil {
		return err
	}
	c, err := s.client()
	if err != nil {
		return err
	}
	return c.DialAndSendWithContext(ctx, msg)
}

// Dir is the transport without an SMTP server: each message becomes an
// .eml file under a directory and a log line, so every flow works offline.
type Dir struct {
	Path   string
	Logger *slog.Logger
	// LogText puts the message's text in its log line, where a person
	// trying the embedded default reads the link. Elsewhere the line names
	// the file, recipient and subject only: the text holds single-use links
	// (a password reset, an invitation, an e-mail change) that would take
	// over the account of whoever reads the log aggregator first.
	LogText bool
}

// Check creates the directory and writes and removes a file in it: a
// directory that cannot hold the messages is found at start, not by the
// first message's retries (which end with the message dropped).
func (d *Dir) Check() error {
	if err := os.MkdirAll(d.Path, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(d.Path, ".writing-*")
	if err != nil {
		return err
	}
	_ = tmp.Close()
	return os.Remove(tmp.Name())
}

// Send implements Transport.
func (d *Dir) Send(ctx context.Context, m *storage.OutboxMessage) error {
	// 8-bit bodies: a person reads (or greps) the link in the file as it
	// is, without quoted-printable line breaks.
	msg, err := message(m, gomail.WithEncoding(gomail.NoEncoding))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(d.Path, 0o700); err != nil {
		return err
	}
	name := fmt.Sprintf("%s-%06d-%s.eml", m.CreatedAt.UTC().Format("20060102T150405Z"), m.ID, m.Purpose)
	tmp, err := os.CreateTemp(d.Path, ".writing-*")
	if err != nil {
		return err
	}
	if _, err := msg.WriteTo(tmp); err != nil {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	path := filepath.Join(d.Path, name)
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if d.Logger != nil {
		attrs := []slog.Attr{slog.String("to", m.ToAddr), slog.String("subject", m.Subject), slog.String("file", path)}
		if d.LogText {
			// The embedded default has no mail server: the log is where a
			// person trying it reads the link.
			attrs = append(attrs, slog.String("text", m.TextBody))
		}
		d.Logger.LogAttrs(ctx, slog.LevelInfo, "mail written to the outbox folder (no SMTP server configured)", attrs...)
	}
	return nil
}
