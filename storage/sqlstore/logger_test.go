package sqlstore_test

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/sqlstore"
	"github.com/lectern/lectern/tenant"
)

// Statements are logged without their values: those include user IDs and
// token hashes. Every statement is "slow" here so that each is logged.
func TestLogsCarryNoValues(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	s, err := sqlstore.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "l.db"), &sqlstore.Options{Logger: logger, SlowQuery: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	const secret = "usr_secretvalue123"
	site := &storage.Site{Slug: "s", Name: "S", Origin: "https://s.test", RegistrationVariant: "B"}
	if err := s.CreateSite(ctx, site); err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	for _, f := range []func() error{
		func() error { _, _, err := s.ListEnrollments(ctx, site.ID, secret, storage.Page{}); return err },
		func() error { _, _, err := s.ListProductPurchases(ctx, site.ID, secret, storage.Page{}); return err },
		func() error { _, err := s.SitesOfUser(ctx, secret); return err },
		func() error { _, err := s.UserByEmail(ctx, secret+"@x.test"); return err },
		func() error { _, _, err := s.ListStudents(ctx, site.ID, secret, storage.Page{}); return err },
	} {
		_ = f()
	}
	if buf.Len() == 0 {
		t.Fatal("nothing was logged; the test would prove nothing")
	}
	if strings.Contains(buf.String(), "secretvalue") {
		t.Fatalf("a logged statement carries a value:\n%s", buf.String())
	}
}

// A slow batched insert (a site import stores 500 sites in one statement)
// is logged with its text cut short, not tens of kilobytes of placeholders.
func TestSlowBatchLogsShortText(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	s, err := sqlstore.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "l.db"), &sqlstore.Options{Logger: logger, SlowQuery: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var sites []*storage.Site
	for i := range 200 {
		sites = append(sites, &storage.Site{Slug: "b" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + strings.Repeat("y", i/26),
			Name: "B", Origin: "https://b" + string(rune('a'+i%26)) + strings.Repeat("y", i/26) + strings.Repeat("x", i%7) + ".test", RegistrationVariant: "B"})
	}
	buf.Reset()
	if err := s.CreateSitesWithKeys(ctx, sites, func([]tenant.ID) ([]*storage.SiteKey, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(buf.String(), "\n") {
		if len(line) > 2000 {
			t.Fatalf("a log line of %d bytes: %.300s...", len(line), line)
		}
	}
	if !strings.Contains(buf.String(), "bytes)") {
		t.Fatalf("no shortened statement logged:\n%.2000s", buf.String())
	}
}
