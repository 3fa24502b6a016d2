-- Idempotency-Key on POST /v1/pets: one row per key a partner
-- sent, scoped to the calling API key, remembered for 24 hours. The key is
-- stored as the hex SHA-256 of its value, in ascii_bin as the sessions'
-- hashes are: utf8mb4's case-insensitive collation would make "abc" and
-- "ABC" one key. request_hash is the SHA-256 of the validated request, to
-- refuse the same key with another body.
-- A row is pending while its first request runs (status NULL, owner the
-- random token of that request, locked_at when it claimed the key); it is
-- made done (status, body, location; owner NULL) in the same transaction
-- that stores the pet, so a create is answered once and replayed after.
-- No foreign key: api_keys rows are never deleted (revoked instead), and a
-- foreign key would lock the key's row on every claim.

-- +goose Up
CREATE TABLE idempotency_keys (
    api_key_id   BIGINT       NOT NULL,
    key_hash     CHAR(64)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    request_hash CHAR(64)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    owner        VARCHAR(32)  CHARACTER SET ascii COLLATE ascii_bin NULL,
    status       SMALLINT     NULL,
    body         BLOB         NULL,
    location     VARCHAR(255) CHARACTER SET ascii COLLATE ascii_bin NULL,
    locked_at    DATETIME(6)  NOT NULL,
    created_at   DATETIME(6)  NOT NULL,
    expires_at   DATETIME(6)  NOT NULL,
    PRIMARY KEY (api_key_id, key_hash),
    KEY idx_idempotency_keys_expires_at (expires_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- +goose Down
DROP TABLE idempotency_keys;
