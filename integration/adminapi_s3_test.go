package integration

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/lectern/lectern/internal/server"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
	"github.com/lectern/lectern/storage/storagetest"
)

// With --files-url naming a bucket, an upload through one replica is
// served by another (which has no copy on its disk), lives in the bucket
// as <prefix><site id>/<key>, and a delete through the other replica
// removes it. The bucket is an S3 protocol server in this process
// (gofakes3), reached by the real minio-go client over HTTP.
func TestUploadsInS3AreSharedByReplicas(t *testing.T) {
	be := s3mem.New()
	if err := be.CreateBucket("lectern-uploads"); err != nil {
		t.Fatal(err)
	}
	s3 := httptest.NewServer(gofakes3.New(be).Server())
	t.Cleanup(s3.Close)
	u, _ := url.Parse(s3.URL)
	t.Setenv("AWS_ACCESS_KEY_ID", "lectern-test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "lectern-test-secret")

	b := backend{name: "postgres+redis", databaseURL: sqltest.PostgresSchemaURL(t), redisURL: storagetest.RedisURL(t)}
	prefix := "lectern-test-" + randomHex(6) + ":"
	shared := func(c *server.Config) {
		c.RedisPrefix = prefix
		c.FilesURL = "s3://lectern-uploads/fleet?endpoint=" + u.Host + "&insecure=1&path_style=1&region=us-east-1"
	}
	first := startServer(t, b, &serverOptions{configure: shared})
	second := startServer(t, b, &serverOptions{configure: shared, originPort: first.port})

	c := admOwner(t, first, first.academy())
	content := append(slices.Clone(admPNG), bytes.Repeat([]byte{7}, 1<<20)...)
	up := admUpload(t, first, first.academy(), c.tok, "banner.png", "image/png", content).want(t, http.StatusCreated, "upload").obj(t)
	fileURL := up["url"].(string)
	key := fileURL[strings.LastIndex(fileURL, "/")+1:]

	site, _ := admSites(t, first)
	obj, err := be.HeadObject("lectern-uploads", "fleet/"+strconv.FormatInt(int64(site.ID), 10)+"/"+key)
	if err != nil || obj.Size != int64(len(content)) {
		t.Fatalf("the object in the bucket: %v, %v", obj, err)
	}
	code, hdr, body := second.get(t, fileURL, "")
	if code != 200 || !bytes.Equal(body, content) || hdr.Get("Content-Type") != "image/png" {
		t.Fatalf("the other replica serves the upload: %d, %d bytes, %v", code, len(body), hdr)
	}

	c2 := &admClient{t: t, ts: second, origin: second.academy(), tok: c.tok}
	c2.do(http.MethodDelete, admPath("/files", up["id"]), nil, http.StatusNoContent)
	if _, err := be.HeadObject("lectern-uploads", "fleet/"+strconv.FormatInt(int64(site.ID), 10)+"/"+key); err == nil {
		t.Fatal("the object outlived the file's deletion")
	}
	if code, _, _ := first.get(t, fileURL, ""); code != http.StatusNotFound {
		t.Fatalf("a deleted upload is served: %d", code)
	}
}
