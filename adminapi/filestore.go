package adminapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/lectern/lectern/tenant"
)

// FileStore keeps the bytes of uploaded files, per site, under keys the API
// chooses (random, [a-z2-7]; see ValidFileKey). The rows describing them
// live in storage.
//
// The embedded default is DiskFileStore under the data directory. A
// deployment with more than one replica needs storage they all share:
// s3files.Store, an S3-compatible object store through minio-go. Package
// filestoretest holds the contract both pass.
type FileStore interface {
	// Put stores the content of r under key. A key is written once.
	Put(ctx context.Context, site tenant.ID, key string, r io.Reader) error
	// Open returns the content stored under key; a missing key is an error
	// wrapping fs.ErrNotExist.
	Open(ctx context.Context, site tenant.ID, key string) (io.ReadCloser, error)
	// Delete removes key; a missing key is not an error.
	Delete(ctx context.Context, site tenant.ID, key string) error
}

// DiskFileStore keeps files under Root/<site id>/<key>.
type DiskFileStore struct {
	Root string
}

var _ FileStore = (*DiskFileStore)(nil)

// errBadKey: keys are chosen by the API; anything else is refused before it
// reaches a path.
var errBadKey = errors.New("adminapi: malformed file key")

// ValidFileKey reports whether key is of the kind the API chooses: 1-64
// characters of [a-z2-7]. Stores refuse any other before it becomes a path
// or an object name.
func ValidFileKey(key string) bool {
	if len(key) == 0 || len(key) > 64 {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

func (d *DiskFileStore) path(site tenant.ID, key string) (string, error) {
	if !ValidFileKey(key) {
		return "", errBadKey
	}
	return filepath.Join(d.Root, strconv.FormatInt(int64(site), 10), key), nil
}

// Put implements FileStore: a temporary file in the same directory, synced
// and renamed, so a reader never sees half a file.
func (d *DiskFileStore) Put(ctx context.Context, site tenant.ID, key string, r io.Reader) error {
	p, err := d.path(site, key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("adminapi: file store: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".upload-*")
	if err != nil {
		return fmt.Errorf("adminapi: file store: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, r); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("adminapi: file store: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("adminapi: file store: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}

// Open implements FileStore.
func (d *DiskFileStore) Open(_ context.Context, site tenant.ID, key string) (io.ReadCloser, error) {
	p, err := d.path(site, key)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", fs.ErrNotExist, err)
	}
	return os.Open(p)
}

// Delete implements FileStore.
func (d *DiskFileStore) Delete(_ context.Context, site tenant.ID, key string) error {
	p, err := d.path(site, key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
