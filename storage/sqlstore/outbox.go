package sqlstore

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/lectern/lectern/storage"
)

// enqueue adds a message to the outbox inside tx (nil: nothing to send).
func enqueue(tx *gorm.DB, m *storage.OutboxMessage) error {
	if m == nil {
		return nil
	}
	prepareMail(m)
	return tx.Create(m).Error
}

func prepareMail(m *storage.OutboxMessage) {
	now := time.Now().UTC()
	if m.CreatedAt.IsZero() {
		m.CreatedAt = now
	}
	m.CreatedAt = m.CreatedAt.UTC()
	if m.NextAttemptAt.IsZero() {
		m.NextAttemptAt = m.CreatedAt
	}
	m.NextAttemptAt = m.NextAttemptAt.UTC()
}

// EnqueueMail implements storage.AccountStore.
func (s *Store) EnqueueMail(ctx context.Context, msgs ...*storage.OutboxMessage) error {
	if len(msgs) == 0 {
		return nil
	}
	for _, m := range msgs {
		prepareMail(m)
	}
	return mapErr(s.db.WithContext(ctx).Create(msgs).Error)
}

// ClaimMail implements storage.AccountStore. On PostgreSQL the candidate
// rows are locked with FOR UPDATE SKIP LOCKED, so senders on several
// replicas claim disjoint messages without waiting for one another; the
// lease then keeps a claimed message from being claimed again while it is
// being sent. SQLite has one writer at a time, so the same statement
// without the locking clause is already exclusive.
func (s *Store) ClaimMail(ctx context.Context, owner string, now, leaseUntil time.Time, limit int) ([]storage.OutboxMessage, error) {
	lock := ""
	if s.dialect == Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	q := `UPDATE outbox_messages SET lease_owner = ?, lease_until = ?, attempts = attempts + 1
WHERE id IN (SELECT id FROM outbox_messages
  WHERE sent_at IS NULL AND dead_at IS NULL AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until <= ?)
  ORDER BY next_attempt_at, id LIMIT ?` + lock + `)
RETURNING *`
	var out []storage.OutboxMessage
	err := s.db.WithContext(ctx).Raw(q, owner, leaseUntil.UTC(), now.UTC(), now.UTC(), limit).Scan(&out).Error
	return out, mapErr(err)
}

// MailSent implements storage.AccountStore. The bodies hold single-use
// links; once delivered they are not kept.
func (s *Store) MailSent(ctx context.Context, id int64, owner string, at time.Time) error {
	res := s.db.WithContext(ctx).Model(&storage.OutboxMessage{}).
		Where("id = ? AND lease_owner = ? AND sent_at IS NULL", id, owner).
		Updates(map[string]any{"sent_at": at.UTC(), "lease_until": nil, "text_body": "", "html_body": "", "last_error": ""})
	if res.Error != nil {
		return mapErr(res.Error)
	}
	if res.RowsAffected == 0 {
		return storage.ErrNotFound
	}
	return nil
}

// MailFailed implements storage.AccountStore.
func (s *Store) MailFailed(ctx context.Context, id int64, owner, reason string, next, at time.Time) error {
	if len(reason) > 500 {
		reason = reason[:500]
	}
	upd := map[string]any{"lease_until": nil, "last_error": reason}
	if next.IsZero() {
		upd["dead_at"] = at.UTC()
	} else {
		upd["next_attempt_at"] = next.UTC()
	}
	res := s.db.WithContext(ctx).Model(&storage.OutboxMessage{}).
		Where("id = ? AND lease_owner = ? AND sent_at IS NULL", id, owner).Updates(upd)
	if res.Error != nil {
		return mapErr(res.Error)
	}
	if res.RowsAffected == 0 {
		return storage.ErrNotFound
	}
	return nil
}

// PruneMail implements storage.AccountStore.
func (s *Store) PruneMail(ctx context.Context, sentBefore, deadBefore time.Time) (int64, error) {
	res := s.db.WithContext(ctx).
		Where("(sent_at IS NOT NULL AND sent_at < ?) OR (dead_at IS NOT NULL AND dead_at < ?)", sentBefore.UTC(), deadBefore.UTC()).
		Delete(&storage.OutboxMessage{})
	return res.RowsAffected, mapErr(res.Error)
}

// MailCounts implements storage.AccountStore.
func (s *Store) MailCounts(ctx context.Context) (waiting, dead int64, err error) {
	var row struct{ Waiting, Dead int64 }
	err = s.db.WithContext(ctx).Model(&storage.OutboxMessage{}).
		Select("COALESCE(SUM(CASE WHEN sent_at IS NULL AND dead_at IS NULL THEN 1 ELSE 0 END), 0) AS waiting, " +
			"COALESCE(SUM(CASE WHEN dead_at IS NOT NULL THEN 1 ELSE 0 END), 0) AS dead").
		Scan(&row).Error
	return row.Waiting, row.Dead, mapErr(err)
}
