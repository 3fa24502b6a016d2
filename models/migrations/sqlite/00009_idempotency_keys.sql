-- Idempotency-Key on POST /v1/pets: one row per key a partner
-- sent, scoped to the calling API key, remembered for 24 hours. The key is
-- stored as the hex SHA-256 of its value, so that the primary key stays
-- small and the comparison is byte for byte. request_hash is the SHA-256
-- of the validated request, to refuse the same key with another body.
-- A row is pending while its first request runs (status NULL, owner the
-- random token of that request, locked_at when it claimed the key); it is
-- made done (status, body, location; owner NULL) in the same transaction
-- that stores the pet, so a create is answered once and replayed after.
-- No foreign key: api_keys rows are never deleted (revoked instead), and a
-- foreign key would lock the key's row on every claim.

-- +goose Up
CREATE TABLE idempotency_keys (
    api_key_id   INTEGER  NOT NULL,
    key_hash     TEXT     NOT NULL,
    request_hash TEXT     NOT NULL,
    owner        TEXT     NULL,
    status       INTEGER  NULL,
    body         BLOB     NULL,
    location     TEXT     NULL,
    locked_at    DATETIME NOT NULL,
    created_at   DATETIME NOT NULL,
    expires_at   DATETIME NOT NULL,
    PRIMARY KEY (api_key_id, key_hash)
);
CREATE INDEX idx_idempotency_keys_expires_at ON idempotency_keys (expires_at);

-- +goose Down
DROP TABLE idempotency_keys;
