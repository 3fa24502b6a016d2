-- Two-step sign-in. totp_secrets holds a member's authenticator app secret,
-- sealed with a key kept outside the database (key_id names it), pending
-- until confirmed with a code (confirmed_at); last_step is the last time
-- step a code was accepted for, so a code is refused once used, on every
-- instance. recovery_codes holds SHA-256 hashes of one-time codes.
-- two_factor_roles lists the roles whose members must use a second step.
-- passkeys holds WebAuthn credentials (public keys and counters, as the
-- library records them); webauthn_challenges the ceremonies under way, so
-- that one begun on an instance can finish on another, once.

-- +goose Up
CREATE TABLE totp_secrets (
    user_id INTEGER NOT NULL PRIMARY KEY,
    key_id TEXT NOT NULL,
    sealed TEXT NOT NULL,
    confirmed_at DATETIME NULL,
    last_step INTEGER NOT NULL DEFAULT 0,
    created_at DATETIME NOT NULL
);
CREATE TABLE recovery_codes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id INTEGER NOT NULL,
    code_hash TEXT NOT NULL,
    created_at DATETIME NOT NULL,
    used_at DATETIME NULL
);
CREATE UNIQUE INDEX idx_recovery_codes_user_hash ON recovery_codes (user_id, code_hash);
CREATE TABLE two_factor_roles (
    role TEXT NOT NULL PRIMARY KEY,
    required_by TEXT NOT NULL,
    created_at DATETIME NOT NULL
);
CREATE TABLE passkeys (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    credential_id TEXT NOT NULL,
    credential TEXT NOT NULL,
    created_at DATETIME NOT NULL,
    last_used_at DATETIME NULL
);
CREATE UNIQUE INDEX idx_passkeys_credential_id ON passkeys (credential_id);
CREATE INDEX idx_passkeys_user_id ON passkeys (user_id);
CREATE TABLE webauthn_challenges (
    id TEXT NOT NULL PRIMARY KEY,
    user_id INTEGER NOT NULL DEFAULT 0,
    purpose TEXT NOT NULL,
    session TEXT NOT NULL,
    expires_at DATETIME NOT NULL
);
CREATE INDEX idx_webauthn_challenges_expires_at ON webauthn_challenges (expires_at);

-- +goose Down
DROP TABLE webauthn_challenges;
DROP TABLE passkeys;
DROP TABLE two_factor_roles;
DROP TABLE recovery_codes;
DROP TABLE totp_secrets;
