package keys

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// KEKSize is the length of the key-encryption key: an AES-256 key.
const KEKSize = 32

// kekFileName is the generated key's name inside the generate directory.
const kekFileName = "kek"

// LoadKEK returns the platform key-encryption key. In order of precedence:
//
//   - env, the value of LECTERN_KEK: base64 (standard or URL alphabet,
//     padded or not) of 32 bytes;
//   - file, the path in LECTERN_KEK_FILE: a file holding that base64 text
//     (surrounding whitespace ignored);
//   - generateDir/kek when generateDir is not empty (the embedded default):
//     read if present, otherwise created with 32 random bytes, mode 0600, in
//     a directory created with mode 0700.
//
// With none of them it returns an error that says how to configure a key.
// Errors never include the key or the text it was decoded from.
func LoadKEK(env, file, generateDir string) ([]byte, error) {
	switch {
	case strings.TrimSpace(env) != "":
		kek, err := decodeKEK(env)
		if err != nil {
			return nil, fmt.Errorf("keys: LECTERN_KEK: %w", err)
		}
		return kek, nil
	case file != "":
		kek, err := readKEKFile(file)
		if err != nil {
			return nil, fmt.Errorf("keys: LECTERN_KEK_FILE: %w", err)
		}
		return kek, nil
	case generateDir != "":
		kek, err := loadOrGenerateKEK(filepath.Join(generateDir, kekFileName))
		if err != nil {
			return nil, fmt.Errorf("keys: generated key-encryption key: %w", err)
		}
		return kek, nil
	default:
		return nil, errors.New("keys: no key-encryption key configured: set LECTERN_KEK to the base64 of 32 random bytes " +
			"(for example the output of `openssl rand -base64 32`), or LECTERN_KEK_FILE to a file that holds it")
	}
}

// LoadKEKs is LoadKEK for a key-encryption key rotation: env may be a
// comma-separated list (the first is current, the others previous), and
// previous (LECTERN_KEK_PREVIOUS) adds comma-separated previous keys. Rows
// sealed under a previous key still open; new rows are sealed under the
// current one; `lectern kek rotate` re-seals the rest.
func LoadKEKs(env, previous, file, generateDir string) (current []byte, prev [][]byte, err error) {
	first, rest, _ := strings.Cut(env, ",")
	current, err = LoadKEK(first, file, generateDir)
	if err != nil {
		return nil, nil, err
	}
	for i, s := range append(strings.Split(rest, ","), strings.Split(previous, ",")...) {
		if strings.TrimSpace(s) == "" {
			continue
		}
		k, err := decodeKEK(s)
		if err != nil {
			return nil, nil, fmt.Errorf("keys: previous key-encryption key %d: %w", i+1, err)
		}
		prev = append(prev, k)
	}
	return current, prev, nil
}

// decodeKEK accepts the four base64 flavours people paste: standard or URL
// alphabet, with or without padding.
func decodeKEK(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	var (
		kek []byte
		err error
	)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		kek, err = enc.Strict().DecodeString(s)
		if err == nil {
			break
		}
	}
	if err != nil {
		// The decoder's error quotes an offset, not the input; still, say
		// nothing about the content.
		return nil, errors.New("not valid base64 (want the base64 of 32 random bytes, e.g. `openssl rand -base64 32`)")
	}
	if len(kek) != KEKSize {
		return nil, fmt.Errorf("decodes to %d bytes, want %d (an AES-256 key; e.g. `openssl rand -base64 32`)", len(kek), KEKSize)
	}
	return kek, nil
}

func readKEKFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	kek, err := decodeKEK(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return kek, nil
}

// loadOrGenerateKEK reads path, or creates it. The new file is written in
// full under a temporary name and then hard-linked into place, so a second
// process starting at the same moment either wins the link or reads the
// complete file of the first, and never overwrites a key that already seals
// rows.
func loadOrGenerateKEK(path string) ([]byte, error) {
	kek, err := readKEKFile(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return kek, err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	kek = make([]byte, KEKSize)
	if _, err := rand.Read(kek); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(dir, ".kek-*") // mode 0600
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return nil, err
	}
	if _, err := tmp.WriteString(base64.StdEncoding.EncodeToString(kek) + "\n"); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, err
	}
	if err := tmp.Close(); err != nil {
		return nil, err
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return readKEKFile(path)
		}
		return nil, err
	}
	return kek, nil
}
