package s3files_test

import (
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/lectern/lectern/adminapi/filestoretest"
	"github.com/lectern/lectern/adminapi/s3files"
	"github.com/lectern/lectern/tenant"
)

// s3Server is an S3 protocol server in the test process (gofakes3 on an
// in-memory backend): the real minio-go client talks real S3 HTTP to it.
// No S3 service or MinIO binary can be installed from this machine's
// registries, so this is the nearest real peer.
func s3Server(t *testing.T, buckets ...string) (*s3mem.Backend, string) {
	t.Helper()
	be := s3mem.New()
	for _, b := range buckets {
		if err := be.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(gofakes3.New(be).Server())
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return be, u.Host
}

func newStore(t *testing.T, endpoint, bucket, prefix string) (*s3files.Store, error) {
	t.Helper()
	return s3files.New(t.Context(), s3files.Config{
		Endpoint: endpoint, Bucket: bucket, Prefix: prefix, Insecure: true, PathStyle: true, Region: "us-east-1",
		Creds: credentials.NewStaticV4("test-access", "test-secret", ""),
	})
}

func TestContract(t *testing.T) {
	_, endpoint := s3Server(t, "uploads")
	s, err := newStore(t, endpoint, "uploads", "lectern/")
	if err != nil {
		t.Fatal(err)
	}
	filestoretest.Run(t, s)
}

// Objects are named <prefix><site>/<key>, so a bucket shared with other
// things, or listed by an operator, shows whose file is whose.
func TestObjectNames(t *testing.T) {
	be, endpoint := s3Server(t, "uploads")
	s, err := newStore(t, endpoint, "uploads", "lectern/")
	if err != nil {
		t.Fatal(err)
	}
	key := filestoretest.NewKey()
	if err := s.Put(t.Context(), tenant.ID(42), key, strings.NewReader("logo")); err != nil {
		t.Fatal(err)
	}
	obj, err := be.HeadObject("uploads", "lectern/42/"+key)
	if err != nil {
		t.Fatalf("object lectern/42/%s: %v", key, err)
	}
	if obj.Size != 4 {
		t.Fatalf("object size %d", obj.Size)
	}
}

func TestNewRefusesAMissingBucket(t *testing.T) {
	_, endpoint := s3Server(t, "uploads")
	if _, err := newStore(t, endpoint, "nope", ""); err == nil || !strings.Contains(err.Error(), `"nope" does not exist`) {
		t.Fatalf("a missing bucket: %v", err)
	}
}

func TestParseURL(t *testing.T) {
	good := map[string]s3files.Config{
		"s3://files": {Bucket: "files", Endpoint: "s3.amazonaws.com"},
		"s3://files/lectern/prod/?region=eu-west-1":                     {Bucket: "files", Endpoint: "s3.amazonaws.com", Prefix: "lectern/prod/", Region: "eu-west-1"},
		"s3://files?endpoint=127.0.0.1:9000&insecure=1&path_style=true": {Bucket: "files", Endpoint: "127.0.0.1:9000", Insecure: true, PathStyle: true},
	}
	for in, want := range good {
		got, err := s3files.ParseURL(in)
		if err != nil || got != want {
			t.Errorf("ParseURL(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{
		"", "files", "http://files", "s3://", "s3://key:secret@files",
		"s3://files?insecure=maybe", "s3://files?endpont=x",
	} {
		if _, err := s3files.ParseURL(bad); err == nil {
			t.Errorf("ParseURL(%q) accepted", bad)
		}
	}
}
