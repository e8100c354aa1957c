package adminapi

import (
	"errors"
	"io"
	"io/fs"
	"strings"
	"testing"

	"github.com/lectern/lectern/tenant"
)

// testFileStore is the contract every FileStore (the S3 one to come
// included) must meet: written keys read back, per site, and deletes are
// idempotent.
func testFileStore(t *testing.T, s FileStore) {
	ctx := t.Context()
	a, b := tenant.ID(1), tenant.ID(2)
	key := newFileKey()
	if err := s.Put(ctx, a, key, strings.NewReader("hello")); err != nil {
		t.Fatal(err)
	}
	rc, err := s.Open(ctx, a, key)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if string(got) != "hello" {
		t.Fatalf("read %q", got)
	}
	if _, err := s.Open(ctx, b, key); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("site B opened site A's file: %v", err)
	}
	if err := s.Delete(ctx, a, key); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, a, key); err != nil {
		t.Fatalf("second delete: %v", err)
	}
	if _, err := s.Open(ctx, a, key); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("deleted file opens: %v", err)
	}
	for _, bad := range []string{"", "../x", "a/b", "UPPER", strings.Repeat("a", 65), "a.b"} {
		if err := s.Put(ctx, a, bad, strings.NewReader("x")); err == nil {
			t.Errorf("Put accepted the key %q", bad)
		}
		if _, err := s.Open(ctx, a, bad); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Open(%q): %v; want not-exist", bad, err)
		}
	}
}

func TestDiskFileStore(t *testing.T) {
	testFileStore(t, &DiskFileStore{Root: t.TempDir()})
}

func TestCleanName(t *testing.T) {
	for in, want := range map[string]string{
		"logo.png":               "logo.png",
		"../../etc/passwd":       "passwd",
		`C:\Users\x\logo.png`:    "logo.png",
		"evil\u202egnp.exe":      "evilgnp.exe",
		"a\"b\x00c.png":          "abc.png",
		"":                       "upload",
		strings.Repeat("é", 300): strings.Repeat("é", 200),
	} {
		if got := cleanName(in); got != want {
			t.Errorf("cleanName(%q) = %q; want %q", in, got, want)
		}
	}
}
