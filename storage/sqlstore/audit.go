package sqlstore

import (
	"context"
	"time"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/tenant"
)

// RecordAudit implements storage.AuditStore.
func (s *Store) RecordAudit(ctx context.Context, e *storage.AuditEvent) error {
	normalizeAudit(e)
	return mapErr(s.db.WithContext(ctx).Create(e).Error)
}

func normalizeAudit(e *storage.AuditEvent) {
	if e.CreatedAt.IsZero() {
		e.CreatedAt = time.Now()
	}
	e.CreatedAt = e.CreatedAt.UTC() // SQLite compares times as text
	if e.Details == nil {
		e.Details = map[string]any{}
	}
}

// ListAudit implements storage.AuditStore.
func (s *Store) ListAudit(ctx context.Context, site tenant.ID, before int64, limit int) ([]storage.AuditEvent, error) {
	q := s.db.WithContext(ctx).Scopes(siteScope(site))
	if before > 0 {
		q = q.Where("id < ?", before)
	}
	var es []storage.AuditEvent
	err := q.Order("id DESC").Limit(limit).Find(&es).Error
	return es, mapErr(err)
}
