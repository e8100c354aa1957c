-- +goose Up
-- 0010_key_rotation: scheduled signing-key rotation. rotate_at is when the
-- scheduler replaces an active key (its activation + the site's period, plus
-- a jitter from the site id, so sites imported together do not all rotate
-- at once); NULL once its rotation has started, and on keys made before
-- this migration (the scheduler schedules those). The partial index makes
-- "what is due" a range scan of due keys only. leases is the one-row-per-job
-- lock that keeps the scheduler on one replica at a time.
ALTER TABLE site_keys ADD COLUMN rotate_at {{.Time}};
CREATE INDEX site_keys_rotate_at ON site_keys (rotate_at) WHERE state = 'active';
CREATE INDEX site_keys_pending ON site_keys (activates_at) WHERE state = 'next';

CREATE TABLE leases (
    name       text PRIMARY KEY,
    holder     text NOT NULL,
    expires_at {{.Time}} NOT NULL
);
