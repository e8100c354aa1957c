package keys_test

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lectern/lectern/authserver/keys"
)

// kekWithURLChars is a key whose standard base64 holds '+' and '/', so the
// std and URL alphabets really differ for it.
func kekWithURLChars() []byte {
	k := make([]byte, keys.KEKSize)
	for i := range k {
		k[i] = byte(0xfb + i%5) // high bytes make standard base64 use '+' and '/'
	}
	return k
}

func TestLoadKEK(t *testing.T) {
	kek := kekWithURLChars()
	std := base64.StdEncoding.EncodeToString(kek)
	if !strings.ContainsAny(std, "+/") {
		t.Fatalf("test key %q has no alphabet-specific characters", std)
	}
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	other := bytes.Repeat([]byte{7}, keys.KEKSize)
	goodFile := write("good", "\n  "+std+"  \n\n")
	otherFile := write("other", base64.StdEncoding.EncodeToString(other))
	short := base64.StdEncoding.EncodeToString(make([]byte, 16))

	for _, tc := range []struct {
		name      string
		env, file string
		gen       string
		want      []byte
		wantErr   string // substring; "" means success
	}{
		{name: "env std padded", env: std, want: kek},
		{name: "env std unpadded", env: base64.RawStdEncoding.EncodeToString(kek), want: kek},
		{name: "env url padded", env: base64.URLEncoding.EncodeToString(kek), want: kek},
		{name: "env url unpadded", env: base64.RawURLEncoding.EncodeToString(kek), want: kek},
		{name: "env with whitespace", env: " " + std + "\n", want: kek},
		{name: "env wins over file", env: std, file: otherFile, want: kek},
		{name: "file", file: goodFile, want: kek},
		{name: "file wins over generate", file: otherFile, gen: t.TempDir(), want: other},
		{name: "env too short", env: short, wantErr: "16 bytes, want 32"},
		{name: "env too long", env: base64.StdEncoding.EncodeToString(make([]byte, 48)), wantErr: "48 bytes, want 32"},
		{name: "env garbage", env: "not*base64!", wantErr: "LECTERN_KEK: not valid base64"},
		{name: "env raw 32 chars", env: strings.Repeat("k", 32), wantErr: "LECTERN_KEK"},
		{name: "file garbage", file: write("garbage", "%%%%"), wantErr: "LECTERN_KEK_FILE"},
		{name: "file too short", file: write("short", short), wantErr: "16 bytes, want 32"},
		{name: "file empty", file: write("empty", ""), wantErr: "LECTERN_KEK_FILE"},
		{name: "file missing", file: filepath.Join(dir, "absent"), wantErr: "LECTERN_KEK_FILE"},
		{name: "nothing", wantErr: "set LECTERN_KEK"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := keys.LoadKEK(tc.env, tc.file, tc.gen)
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("LoadKEK succeeded, want error containing %q", tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %q does not contain %q", err, tc.wantErr)
				}
				if strings.TrimSpace(tc.env) != "" && strings.Contains(err.Error(), strings.TrimSpace(tc.env)) {
					t.Fatalf("error %q repeats the secret input", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tc.want) {
				t.Fatalf("LoadKEK = %x, want %x", got, tc.want)
			}
		})
	}
}

func TestLoadKEKGenerates(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	first, err := keys.LoadKEK("", "", dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != keys.KEKSize || bytes.Equal(first, make([]byte, keys.KEKSize)) {
		t.Fatalf("generated key %x is not 32 random bytes", first)
	}
	path := filepath.Join(dir, "kek")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode = %v, want 0600", fi.Mode().Perm())
	}
	di, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if di.Mode().Perm() != 0o700 {
		t.Errorf("key directory mode = %v, want 0700", di.Mode().Perm())
	}
	// The file is usable as LECTERN_KEK_FILE, and nothing else was left behind.
	fromFile, err := keys.LoadKEK("", path, "")
	if err != nil || !bytes.Equal(fromFile, first) {
		t.Fatalf("LoadKEK(file=%s) = %x, %v; want the generated key", path, fromFile, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only kek", len(entries))
	}

	second, err := keys.LoadKEK("", "", dir)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(second, first) {
		t.Fatal("second start generated a new key instead of reusing the first")
	}

	// A damaged generated file is an error, never silently replaced: rows
	// sealed under the old key would become unusable.
	if err := os.WriteFile(path, []byte("damaged"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := keys.LoadKEK("", "", dir); err == nil {
		t.Fatal("LoadKEK accepted a damaged generated key file")
	}
	if b, _ := os.ReadFile(path); string(b) != "damaged" {
		t.Fatal("LoadKEK overwrote a damaged key file")
	}
}
