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
    user_id BIGINT NOT NULL PRIMARY KEY,
    key_id VARCHAR(32) NOT NULL,
    sealed VARCHAR(255) NOT NULL,
    confirmed_at DATETIME(6) NULL,
    last_step BIGINT NOT NULL DEFAULT 0,
    created_at DATETIME(6) NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;
CREATE TABLE recovery_codes (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    user_id BIGINT NOT NULL,
    code_hash CHAR(64) NOT NULL,
    created_at DATETIME(6) NOT NULL,
    used_at DATETIME(6) NULL,
    UNIQUE KEY idx_recovery_codes_user_hash (user_id, code_hash)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;
CREATE TABLE two_factor_roles (
    role VARCHAR(16) COLLATE utf8mb4_bin NOT NULL PRIMARY KEY,
    required_by VARCHAR(255) NOT NULL,
    created_at DATETIME(6) NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;
CREATE TABLE passkeys (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    user_id BIGINT NOT NULL,
    name VARCHAR(100) NOT NULL,
    credential_id VARCHAR(700) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    credential TEXT NOT NULL,
    created_at DATETIME(6) NOT NULL,
    last_used_at DATETIME(6) NULL,
    UNIQUE KEY idx_passkeys_credential_id (credential_id),
    KEY idx_passkeys_user_id (user_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;
CREATE TABLE webauthn_challenges (
    id CHAR(43) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
    user_id BIGINT NOT NULL DEFAULT 0,
    purpose VARCHAR(16) NOT NULL,
    session TEXT NOT NULL,
    expires_at DATETIME(6) NOT NULL,
    KEY idx_webauthn_challenges_expires_at (expires_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- +goose Down
DROP TABLE webauthn_challenges;
DROP TABLE passkeys;
DROP TABLE two_factor_roles;
DROP TABLE recovery_codes;
DROP TABLE totp_secrets;
