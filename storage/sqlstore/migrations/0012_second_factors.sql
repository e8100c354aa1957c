-- +goose Up
-- 0012_second_factors: passkeys (WebAuthn credentials, one relying party
-- per site), TOTP authenticators and their one-time recovery codes.

-- A passkey is registered at one site: its relying party ID is the site's
-- host, so it can sign in only there. credential_id is the authenticator's
-- ID of it; data is the verified credential (public key, sign count,
-- flags, transports) as JSON.
CREATE TABLE passkeys (
    id            {{.ID}},
    site_id       {{.Int64}} NOT NULL REFERENCES sites (id) ON DELETE CASCADE,
    user_id       text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    credential_id {{.Bytes}} NOT NULL,
    name          text NOT NULL,
    data          text NOT NULL,
    created_at    {{.Time}} NOT NULL,
    last_used_at  {{.Time}}
);
CREATE UNIQUE INDEX passkeys_credential ON passkeys (site_id, credential_id);
CREATE INDEX passkeys_user ON passkeys (user_id, site_id);

-- TOTP is a factor of the account, which is platform-wide. last_step is
-- the last time step a code was accepted for: a code is never accepted
-- twice.
CREATE TABLE totp_authenticators (
    user_id    text PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    secret     text NOT NULL,
    last_step  {{.Int64}} NOT NULL DEFAULT 0,
    created_at {{.Time}} NOT NULL
);

-- Recovery codes are shown once; only their SHA-256 is stored.
CREATE TABLE recovery_codes (
    id        {{.ID}},
    user_id   text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash {{.Bytes}} NOT NULL,
    used_at   {{.Time}}
);
CREATE UNIQUE INDEX recovery_codes_hash ON recovery_codes (user_id, code_hash);

