package s3files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/lectern/lectern/adminapi"
	"github.com/lectern/lectern/tenant"
)

// Config says where the files go.
type Config struct {
	// Endpoint is host[:port] of the S3 API; default s3.amazonaws.com.
	Endpoint string
	Bucket   string
	// Prefix is put before every object name ("lectern/" say); it ends in
	// a slash or is empty.
	Prefix string
	Region string
	// Insecure talks plain http (a MinIO on loopback, tests).
	Insecure bool
	// PathStyle addresses the bucket in the path rather than the host name.
	PathStyle bool
	// Creds, when nil, is the environment chain of the package doc.
	Creds *credentials.Credentials
	// Transport, when set, replaces the HTTP transport (tests).
	Transport http.RoundTripper
}

// ParseURL reads a files URL of the form the package doc shows.
func ParseURL(raw string) (Config, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "s3" || u.Host == "" {
		return Config{}, fmt.Errorf("s3files: %q is not an s3://<bucket>[/<prefix>] URL", raw)
	}
	if u.User != nil {
		return Config{}, errors.New("s3files: credentials do not belong in the URL; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	c := Config{Bucket: u.Host, Endpoint: "s3.amazonaws.com"}
	if p := strings.Trim(u.Path, "/"); p != "" {
		c.Prefix = p + "/"
	}
	q := u.Query()
	for name := range q {
		switch name {
		case "endpoint", "region", "insecure", "path_style":
		default:
			return Config{}, fmt.Errorf("s3files: unknown parameter %q in the files URL", name)
		}
	}
	if e := q.Get("endpoint"); e != "" {
		c.Endpoint = e
	}
	c.Region = q.Get("region")
	for name, p := range map[string]*bool{"insecure": &c.Insecure, "path_style": &c.PathStyle} {
		if v := q.Get(name); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return Config{}, fmt.Errorf("s3files: %s=%q is not a boolean", name, v)
			}
			*p = b
		}
	}
	return c, nil
}

// Store keeps files as objects in one bucket.
type Store struct {
	client *minio.Client
	bucket string
	prefix string
}

var _ adminapi.FileStore = (*Store)(nil)

// New connects and checks that the bucket exists, so a wrong setting
// stops the server at start rather than failing the first upload.
func New(ctx context.Context, c Config) (*Store, error) {
	if c.Bucket == "" {
		return nil, errors.New("s3files: no bucket")
	}
	creds := c.Creds
	if creds == nil {
		creds = credentials.NewChainCredentials([]credentials.Provider{
			&credentials.EnvAWS{}, &credentials.EnvMinio{}, &credentials.FileAWSCredentials{}, &credentials.IAM{},
		})
	}
	lookup := minio.BucketLookupAuto
	if c.PathStyle {
		lookup = minio.BucketLookupPath
	}
	cl, err := minio.New(c.Endpoint, &minio.Options{
		Creds: creds, Secure: !c.Insecure, Region: c.Region, BucketLookup: lookup, Transport: c.Transport,
	})
	if err != nil {
		return nil, fmt.Errorf("s3files: %w", err)
	}
	ok, err := cl.BucketExists(ctx, c.Bucket)
	if err != nil {
		return nil, fmt.Errorf("s3files: checking bucket %q: %w", c.Bucket, err)
	}
	if !ok {
		return nil, fmt.Errorf("s3files: bucket %q does not exist", c.Bucket)
	}
	return &Store{client: cl, bucket: c.Bucket, prefix: c.Prefix}, nil
}

// errBadKey: keys are the API's own; anything else never becomes an
// object name.
var errBadKey = errors.New("s3files: malformed file key")

func (s *Store) object(site tenant.ID, key string) (string, error) {
	if !adminapi.ValidFileKey(key) {
		return "", errBadKey
	}
	return s.prefix + strconv.FormatInt(int64(site), 10) + "/" + key, nil
}

// maxObject bounds what Put reads from a reader of unknown length. The API
// caps uploads far below it (adminapi.DefaultMaxUploadBytes).
const maxObject = 64 << 20

// Put implements adminapi.FileStore, always in one PUT: uploads are small
// (the API caps them at 10 MiB), and one request beats the three of a
// multipart upload. A reader that does not know its length is read into
// memory first, up to 64 MiB.
func (s *Store) Put(ctx context.Context, site tenant.ID, key string, r io.Reader) error {
	name, err := s.object(site, key)
	if err != nil {
		return err
	}
	l, ok := r.(interface{ Len() int })
	if !ok {
		b, err := io.ReadAll(io.LimitReader(r, maxObject+1))
		if err != nil {
			return fmt.Errorf("s3files: put: %w", err)
		}
		if len(b) > maxObject {
			return fmt.Errorf("s3files: put: more than %d bytes", maxObject)
		}
		br := bytes.NewReader(b)
		r, l = br, br
	}
	if _, err := s.client.PutObject(ctx, s.bucket, name, r, int64(l.Len()), minio.PutObjectOptions{}); err != nil {
		return fmt.Errorf("s3files: put: %w", err)
	}
	return nil
}

// Open implements adminapi.FileStore. A missing object wraps fs.ErrNotExist.
func (s *Store) Open(ctx context.Context, site tenant.ID, key string) (io.ReadCloser, error) {
	name, err := s.object(site, key)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", fs.ErrNotExist, err)
	}
	obj, err := s.client.GetObject(ctx, s.bucket, name, minio.GetObjectOptions{})
	if err == nil {
		// GetObject is lazy; Stat makes the request and reports a miss.
		_, err = obj.Stat()
	}
	if err != nil {
		if obj != nil {
			obj.Close()
		}
		if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
			return nil, fmt.Errorf("%w: %s", fs.ErrNotExist, name)
		}
		return nil, fmt.Errorf("s3files: get: %w", err)
	}
	return obj, nil
}

// Delete implements adminapi.FileStore; S3 deletes of a missing object
// succeed, as the contract wants.
func (s *Store) Delete(ctx context.Context, site tenant.ID, key string) error {
	name, err := s.object(site, key)
	if err != nil {
		return err
	}
	if err := s.client.RemoveObject(ctx, s.bucket, name, minio.RemoveObjectOptions{}); err != nil {
		return fmt.Errorf("s3files: delete: %w", err)
	}
	return nil
}
