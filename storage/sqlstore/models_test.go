package sqlstore_test

import (
	"context"
	"testing"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/sqlstore"
	"github.com/lectern/lectern/storage/sqlstore/sqltest"
)

// allModels lists every record type stored in the database.
func allModels() []any {
	return []any{&storage.Site{}, &storage.SiteHost{}, &storage.SiteKey{}, &storage.User{}, &storage.SiteRole{},
		&storage.Client{}, &storage.VendorIntegration{}, &storage.CIMDHost{}, &storage.Grant{}, &storage.RefreshToken{},
		&storage.Consent{}, &storage.RevokedToken{}, &storage.AuditEvent{}, &storage.Course{}, &storage.Lecturer{}, &storage.CourseLecturer{},
		&storage.Section{}, &storage.Lecture{}, &storage.Enrollment{}, &storage.LectureProgress{}, &storage.DigitalProduct{},
		&storage.DigitalProductPurchase{}, &storage.ConsultingService{}, &storage.ConsultingPurchase{}, &storage.Event{},
		&storage.EventRegistration{}, &storage.Notification{}, &storage.NotificationSubscription{}, &storage.MembershipPlan{},
		&storage.Order{}, &storage.OrderItem{},
		&storage.Coupon{}, &storage.Post{}, &storage.SitePage{}, &storage.Comment{}, &storage.Form{}, &storage.FormSubmission{},
		&storage.File{}, &storage.Appearance{}, &storage.Subscription{}}
}

func TestModelsMatchMigratedSchema(t *testing.T) {
	sqltest.Each(t, func(t *testing.T, s *sqlstore.Store) {
		if err := s.CheckModels(context.Background(), allModels()...); err != nil {
			t.Fatal(err)
		}
	})
}

// The check itself must notice a missing column, or it proves nothing.
func TestCheckModelsNoticesMissingColumn(t *testing.T) {
	type ghost struct {
		ID    int64
		Haunt string
	}
	s := sqltest.SQLite(t)
	if err := s.Exec(context.Background(), "CREATE TABLE ghosts (id integer primary key)"); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckModels(context.Background(), &ghost{}); err == nil {
		t.Fatal("CheckModels accepted a model whose column haunt does not exist")
	}
}
