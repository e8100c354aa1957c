-- +goose Up
-- 0011_accounts: invitations, single-use account links (password reset,
-- sign-up verification, e-mail change) and the mail outbox; accounts carry
-- whether their e-mail address is verified.

-- Accounts that exist before this migration were created by operators
-- (CLI, admin API, demo seed), who vouch for the address: they count as
-- verified. New rows say so explicitly.
ALTER TABLE users ADD COLUMN email_verified boolean NOT NULL DEFAULT false;
UPDATE users SET email_verified = true;

CREATE TABLE invitations (
    id          {{.ID}},
    site_id     {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    email       text NOT NULL,
    role        text NOT NULL CHECK (role IN ('owner', 'admin', 'lecturer', 'student')),
    token_hash  {{.Bytes}} NOT NULL UNIQUE,
    invited_by  text NOT NULL,
    created_at  {{.Time}} NOT NULL,
    sent_at     {{.Time}} NOT NULL,
    expires_at  {{.Time}} NOT NULL,
    accepted_at {{.Time}},
    accepted_by text NOT NULL DEFAULT '',
    revoked_at  {{.Time}}
);
-- One pending invitation per address and site.
CREATE UNIQUE INDEX invitations_pending ON invitations (site_id, email) WHERE accepted_at IS NULL AND revoked_at IS NULL;
CREATE INDEX invitations_site ON invitations (site_id, id);

CREATE TABLE account_tokens (
    id            {{.ID}},
    purpose       text NOT NULL CHECK (purpose IN ('password_reset', 'signup', 'email_change')),
    site_id       {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    user_id       text NOT NULL DEFAULT '',
    email         text NOT NULL,
    name          text NOT NULL DEFAULT '',
    password_hash text NOT NULL DEFAULT '',
    auth_request  text NOT NULL DEFAULT '',
    browser_hash  {{.Bytes}},
    token_hash    {{.Bytes}} NOT NULL UNIQUE,
    created_at    {{.Time}} NOT NULL,
    expires_at    {{.Time}} NOT NULL,
    used_at       {{.Time}}
);
CREATE INDEX account_tokens_user ON account_tokens (user_id, purpose);
CREATE INDEX account_tokens_expiry ON account_tokens (expires_at);

CREATE TABLE outbox_messages (
    id              {{.ID}},
    site_id         {{.Int64}} NOT NULL DEFAULT 0,
    purpose         text NOT NULL,
    to_addr         text NOT NULL,
    from_name       text NOT NULL,
    from_addr       text NOT NULL,
    subject         text NOT NULL,
    text_body       text NOT NULL,
    html_body       text NOT NULL,
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at {{.Time}} NOT NULL,
    lease_owner     text NOT NULL DEFAULT '',
    lease_until     {{.Time}},
    last_error      text NOT NULL DEFAULT '',
    created_at      {{.Time}} NOT NULL,
    sent_at         {{.Time}},
    dead_at         {{.Time}}
);
-- The sender loop's claim reads only what is still to be sent.
CREATE INDEX outbox_due ON outbox_messages (next_attempt_at, id) WHERE sent_at IS NULL AND dead_at IS NULL;
CREATE INDEX outbox_sent ON outbox_messages (sent_at) WHERE sent_at IS NOT NULL;

-- A password reset revokes the account's grants at every site.
CREATE INDEX grants_user_live ON grants (user_id) WHERE revoked_at IS NULL;
