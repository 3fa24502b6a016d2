-- The admin console: server-side sessions (the gin-contrib/sessions gorm
-- backend's table), shared settings such as the session keys, failed logins
-- for rate limiting, and a per-user session version so that changing a
-- password signs out the account's other sessions.

-- +goose Up
CREATE TABLE sessions (
    id         TEXT     NOT NULL PRIMARY KEY,
    data       TEXT     NOT NULL,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    expires_at DATETIME NOT NULL
);
CREATE INDEX idx_sessions_expires_at ON sessions (expires_at);

CREATE TABLE settings (
    name       TEXT     NOT NULL PRIMARY KEY,
    value      TEXT     NOT NULL,
    created_at DATETIME NOT NULL
);

CREATE TABLE login_failures (
    id        INTEGER  NOT NULL PRIMARY KEY AUTOINCREMENT,
    username  TEXT     NOT NULL,
    client_ip TEXT     NOT NULL,
    at        DATETIME NOT NULL
);
CREATE INDEX idx_login_failures_username ON login_failures (username, at);
CREATE INDEX idx_login_failures_client_ip ON login_failures (client_ip, at);
CREATE INDEX idx_login_failures_at ON login_failures (at);

ALTER TABLE users ADD COLUMN session_version INTEGER NOT NULL DEFAULT 1;

-- +goose Down
ALTER TABLE users DROP COLUMN session_version;
DROP TABLE login_failures;
DROP TABLE settings;
DROP TABLE sessions;
