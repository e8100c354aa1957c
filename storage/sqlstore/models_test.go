package sqlstore_test

import (
	"context"
	"testing"

	"github.com/lectern/lectern/storage/sqlstore"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
)

func TestSchemaMatchesModels(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		if err := s.CheckSchema(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}
