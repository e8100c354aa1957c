package keys_test

import (
	"bytes"
	"crypto/rand"
	"errors"
	"testing"

	"github.com/lectern/lectern/authserver/keys"
	"github.com/lectern/lectern/tenant"
)

func newKEK(t testing.TB) []byte {
	t.Helper()
	k := make([]byte, keys.KEKSize)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

func newSealer(t testing.TB, kek []byte) *keys.Sealer {
	t.Helper()
	s, err := keys.NewSealer(kek)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSealOpenRoundtrip(t *testing.T) {
	s := newSealer(t, newKEK(t))
	plain := []byte("PKCS #8 stands in here")
	a, err := s.Seal(7, "kid-1", plain)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Seal(7, "kid-1", plain)
	if err != nil {
		t.Fatal(err)
	}
	if a[0] != 2 {
		t.Errorf("version byte = %d, want 2", a[0])
	}
	if want := 1 + 8 + 12 + len(plain) + 16; len(a) != want {
		t.Errorf("sealed length = %d, want %d (version, KEK id, nonce, ciphertext, tag)", len(a), want)
	}
	if keys.SealedKEKID(a) != s.KEKID() || !s.Current(a) {
		t.Errorf("blob names KEK %q, want the sealer's %q", keys.SealedKEKID(a), s.KEKID())
	}
	if bytes.Equal(a[9:21], b[9:21]) {
		t.Error("two seals reused a nonce")
	}
	if bytes.Contains(a, plain) {
		t.Error("sealed blob contains the plaintext")
	}
	for _, sealed := range [][]byte{a, b} {
		got, err := s.Open(7, "kid-1", sealed)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, plain) {
			t.Errorf("Open = %q, want %q", got, plain)
		}
	}
}

func TestOpenWithOtherKEKFails(t *testing.T) {
	sealed, err := newSealer(t, newKEK(t)).Seal(1, "k", []byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = newSealer(t, newKEK(t)).Open(1, "k", sealed)
	if !errors.Is(err, keys.ErrSealedKey) {
		t.Fatalf("Open under another KEK: err = %v, want ErrSealedKey", err)
	}
}

func TestOpenMovedBlobFails(t *testing.T) {
	s := newSealer(t, newKEK(t))
	sealed, err := s.Seal(1, "kid-a", []byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		site tenant.ID
		kid  string
	}{
		{"other site", 2, "kid-a"},
		{"other kid", 1, "kid-b"},
		{"kid prefix", 1, "kid-"},
		{"both", 2, "kid-b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := s.Open(tc.site, tc.kid, sealed); !errors.Is(err, keys.ErrSealedKey) {
				t.Fatalf("Open(%d, %q) err = %v, want ErrSealedKey", tc.site, tc.kid, err)
			}
		})
	}
}

func TestOpenTamperedFails(t *testing.T) {
	s := newSealer(t, newKEK(t))
	sealed, err := s.Seal(1, "k", []byte("a private key"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range sealed {
		bad := bytes.Clone(sealed)
		bad[i] ^= 0x01
		if _, err := s.Open(1, "k", bad); err == nil {
			t.Errorf("flipping a bit of byte %d still opens", i)
		}
	}
	for _, n := range []int{0, 1, 13, 28, len(sealed) - 1} {
		if _, err := s.Open(1, "k", sealed[:n]); err == nil {
			t.Errorf("truncated to %d bytes still opens", n)
		}
	}
	if _, err := s.Open(1, "k", append(bytes.Clone(sealed), 0)); err == nil {
		t.Error("an appended byte still opens")
	}
}

func TestNewSealerRejectsBadKEK(t *testing.T) {
	for _, n := range []int{0, 16, 24, 31, 33, 64} {
		if _, err := keys.NewSealer(make([]byte, n)); err == nil {
			t.Errorf("NewSealer accepted a %d-byte key", n)
		}
	}
}

// During a KEK rotation replicas hold the new KEK and the previous one:
// they open what either sealed and seal only under the new one.
func TestSealerOpensUnderPreviousKEK(t *testing.T) {
	oldKEK, newKEK := newKEK(t), newKEK(t)
	old := newSealer(t, oldKEK)
	both, err := keys.NewSealer(newKEK, oldKEK)
	if err != nil {
		t.Fatal(err)
	}
	plain := []byte("private key")
	byOld, err := old.Seal(3, "k", plain)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := both.Open(3, "k", byOld); err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("new+previous sealer: Open(old blob) = %q, %v", got, err)
	}
	if both.Current(byOld) {
		t.Error("a blob sealed under the previous KEK counts as current")
	}
	byNew, err := both.Seal(3, "k", plain)
	if err != nil {
		t.Fatal(err)
	}
	if keys.SealedKEKID(byNew) == keys.SealedKEKID(byOld) || !both.Current(byNew) {
		t.Errorf("new blob names KEK %q (old %q); want the new KEK", keys.SealedKEKID(byNew), keys.SealedKEKID(byOld))
	}
	if _, err := old.Open(3, "k", byNew); !errors.Is(err, keys.ErrSealedKey) {
		t.Errorf("old sealer opened a blob sealed under the new KEK: %v", err)
	}
	// A blob whose KEK id is changed to the other key's does not open.
	forged := bytes.Clone(byNew)
	copy(forged[1:9], byOld[1:9])
	if _, err := both.Open(3, "k", forged); !errors.Is(err, keys.ErrSealedKey) {
		t.Errorf("relabelled blob opened: %v", err)
	}
}
