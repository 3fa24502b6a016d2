-- Sign-in limits reserved before the password is checked (see
-- models/signin.go), in place of the failed sign-ins counted afterwards.
-- A row per limit, keyed by the SHA-256 of what it limits, so that what was
-- typed as a username is never stored. (SQLite compares text exactly, so
-- usernames need no change of collation here.)

-- +goose Up
CREATE TABLE login_limits (
    name         TEXT     NOT NULL PRIMARY KEY,
    checks       INTEGER  NOT NULL,
    window_start DATETIME NOT NULL,
    next_at      DATETIME NOT NULL,
    updated_at   DATETIME NOT NULL
);
CREATE INDEX idx_login_limits_updated_at ON login_limits (updated_at);

DROP TABLE login_failures;

-- +goose Down
CREATE TABLE login_failures (
    id        INTEGER  NOT NULL PRIMARY KEY AUTOINCREMENT,
    username  TEXT     NOT NULL,
    client_ip TEXT     NOT NULL,
    at        DATETIME NOT NULL
);
CREATE INDEX idx_login_failures_username ON login_failures (username, at);
CREATE INDEX idx_login_failures_client_ip ON login_failures (client_ip, at);
CREATE INDEX idx_login_failures_at ON login_failures (at);

DROP TABLE login_limits;
