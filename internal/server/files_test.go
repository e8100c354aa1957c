package server

import (
	"context"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// A files URL that cannot work stops the server at start, with a message
// naming the setting, instead of failing the first upload.
func TestFilesURLIsCheckedAtStart(t *testing.T) {
	be := s3mem.New()
	s3 := httptest.NewServer(gofakes3.New(be).Server())
	t.Cleanup(s3.Close)
	u, _ := url.Parse(s3.URL)
	t.Setenv("AWS_ACCESS_KEY_ID", "lectern-test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "lectern-test-secret")
	for url, want := range map[string]string{
		"s3://missing?endpoint=" + u.Host + "&insecure=1&path_style=1": `bucket "missing" does not exist`,
		"s3://key:secret@bucket":       "--files-url: s3files: credentials do not belong in the URL",
		"https://bucket.example/files": "--files-url: s3files:",
	} {
		_, err := openFiles(context.Background(), &Config{FilesURL: url})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--files-url %s: %v; want %q", url, err, want)
		}
	}
}
