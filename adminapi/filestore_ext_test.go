package adminapi_test

import (
	"testing"

	"github.com/lectern/lectern/adminapi"
	"github.com/lectern/lectern/adminapi/filestoretest"
)

func TestDiskFileStore(t *testing.T) {
	filestoretest.Run(t, &adminapi.DiskFileStore{Root: t.TempDir()})
}
