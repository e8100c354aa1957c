package filestoretest

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"io/fs"
	"strings"
	"testing"

	"github.com/lectern/lectern/adminapi"
	"github.com/lectern/lectern/tenant"
)

// Run checks s against the FileStore contract, using sites 1 and 2.
func Run(t *testing.T, s adminapi.FileStore) {
	t.Helper()
	ctx := t.Context()
	a, b := tenant.ID(1), tenant.ID(2)
	read := func(site tenant.ID, key string) ([]byte, error) {
		rc, err := s.Open(ctx, site, key)
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		return io.ReadAll(rc)
	}

	key := NewKey()
	if err := s.Put(ctx, a, key, strings.NewReader("hello")); err != nil {
		t.Fatal(err)
	}
	if got, err := read(a, key); err != nil || string(got) != "hello" {
		t.Fatalf("read back %q, %v", got, err)
	}
	if _, err := read(b, key); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("site B opened site A's file: %v", err)
	}

	// A larger body of any reader (not only one that knows its length)
	// comes back byte for byte.
	big := make([]byte, 3<<20)
	_, _ = rand.Read(big)
	bigKey := NewKey()
	if err := s.Put(ctx, b, bigKey, io.MultiReader(bytes.NewReader(big[:1<<20]), bytes.NewReader(big[1<<20:]))); err != nil {
		t.Fatal(err)
	}
	if got, err := read(b, bigKey); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("3 MiB read back: %d bytes, %v", len(got), err)
	}

	for _, k := range []string{key, bigKey} {
		site := a
		if k == bigKey {
			site = b
		}
		if err := s.Delete(ctx, site, k); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, site, k); err != nil {
			t.Fatalf("second delete: %v", err)
		}
		if _, err := read(site, k); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("deleted file opens: %v", err)
		}
	}

	// A delete for another site leaves the file alone.
	kept := NewKey()
	if err := s.Put(ctx, a, kept, strings.NewReader("kept")); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, b, kept); err != nil {
		t.Fatal(err)
	}
	if got, err := read(a, kept); err != nil || string(got) != "kept" {
		t.Fatalf("site B's delete removed site A's file: %q, %v", got, err)
	}
	_ = s.Delete(ctx, a, kept)

	for _, bad := range []string{"", "../x", "a/b", "UPPER", strings.Repeat("a", 65), "a.b", "%2e%2e"} {
		if err := s.Put(ctx, a, bad, strings.NewReader("x")); err == nil {
			t.Errorf("Put accepted the key %q", bad)
		}
		if _, err := s.Open(ctx, a, bad); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Open(%q): %v; want not-exist", bad, err)
		}
		if err := s.Delete(ctx, a, bad); err == nil {
			t.Errorf("Delete accepted the key %q", bad)
		}
	}
}

// NewKey returns a fresh key of the kind the API chooses.
func NewKey() string {
	var b [20]byte
	_, _ = rand.Read(b[:])
	const alphabet = "abcdefghijklmnopqrstuvwxyz234567"
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = alphabet[c%32]
	}
	return string(out)
}
