-- The first schema: pets, staff users, partner API keys and the audit trail.
-- AUTOINCREMENT keeps ids from ever being reused, which keyset paging and
-- Location headers rely on.

-- +goose Up
CREATE TABLE pets (
    id          INTEGER  NOT NULL PRIMARY KEY AUTOINCREMENT,
    name        TEXT     NOT NULL,
    category_id INTEGER  NOT NULL CHECK (category_id > 0),
    status      TEXT     NOT NULL CHECK (status IN ('available', 'pending', 'sold')),
    created_at  DATETIME NOT NULL,
    updated_at  DATETIME NOT NULL
);
CREATE INDEX idx_pets_status_id ON pets (status, id);

CREATE TABLE users (
    id            INTEGER  NOT NULL PRIMARY KEY AUTOINCREMENT,
    username      TEXT     NOT NULL,
    password_hash TEXT     NOT NULL,
    created_at    DATETIME NOT NULL,
    updated_at    DATETIME NOT NULL
);
CREATE UNIQUE INDEX idx_users_username ON users (username);

CREATE TABLE api_keys (
    id           INTEGER  NOT NULL PRIMARY KEY AUTOINCREMENT,
    name         TEXT     NOT NULL,
    prefix       TEXT     NOT NULL,
    hash         TEXT     NOT NULL,
    created_by   TEXT     NOT NULL,
    created_at   DATETIME NOT NULL,
    last_used_at DATETIME NULL,
    revoked_at   DATETIME NULL
);
CREATE UNIQUE INDEX idx_api_keys_prefix ON api_keys (prefix);

CREATE TABLE audit_events (
    id          INTEGER  NOT NULL PRIMARY KEY AUTOINCREMENT,
    at          DATETIME NOT NULL,
    actor       TEXT     NOT NULL,
    action      TEXT     NOT NULL,
    target_type TEXT     NOT NULL,
    target_id   INTEGER  NOT NULL,
    detail      TEXT     NOT NULL
);
CREATE INDEX idx_audit_events_target ON audit_events (target_type, target_id, id);
CREATE INDEX idx_audit_events_action ON audit_events (action, id);

-- +goose Down
DROP TABLE audit_events;
DROP TABLE api_keys;
DROP TABLE users;
DROP TABLE pets;
