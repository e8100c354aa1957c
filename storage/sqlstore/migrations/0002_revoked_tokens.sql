-- +goose Up
-- 0002_revoked_tokens: durable revocation of single access tokens (RFC 7009)
-- by jti. Rows are kept until the token would have expired anyway.
CREATE TABLE revoked_tokens (
    site_id    {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    jti        text NOT NULL,
    expires_at {{.Time}} NOT NULL,
    revoked_at {{.Time}} NOT NULL,
    PRIMARY KEY (site_id, jti)
);
CREATE INDEX revoked_tokens_site_expiry ON revoked_tokens (site_id, expires_at);
CREATE INDEX grants_site_revoked ON grants (site_id, revoked_at) WHERE revoked_at IS NOT NULL;
