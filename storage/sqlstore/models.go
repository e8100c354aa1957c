package sqlstore

import "github.com/lectern/lectern/storage"

// storedModels lists every record type stored in a table of its own, for
// CheckSchema. A test fails when a type of package storage with a
// primaryKey field is missing here.
func storedModels() []any {
	return []any{&storage.Site{}, &storage.SiteHost{}, &storage.SiteKey{}, &storage.Lease{}, &storage.User{}, &storage.SiteRole{},
		&storage.Client{}, &storage.VendorIntegration{}, &storage.CIMDHost{}, &storage.Grant{}, &storage.RefreshToken{},
		&storage.Consent{}, &storage.RevokedToken{}, &storage.AuditEvent{}, &storage.Course{}, &storage.Lecturer{}, &storage.CourseLecturer{},
		&storage.Section{}, &storage.Lecture{}, &storage.Enrollment{}, &storage.LectureProgress{}, &storage.DigitalProduct{},
		&storage.DigitalProductPurchase{}, &storage.ConsultingService{}, &storage.ConsultingPurchase{}, &storage.Event{},
		&storage.EventRegistration{}, &storage.Notification{}, &storage.NotificationSubscription{}, &storage.MembershipPlan{},
		&storage.Order{}, &storage.OrderItem{},
		&storage.Coupon{}, &storage.Post{}, &storage.SitePage{}, &storage.Comment{}, &storage.Form{}, &storage.FormSubmission{},
		&storage.File{}, &storage.Appearance{}, &storage.Subscription{},
		&storage.Invitation{}, &storage.AccountToken{}, &storage.OutboxMessage{},
		&storage.Passkey{}, &storage.TOTP{}, &storage.RecoveryCode{}}
}
