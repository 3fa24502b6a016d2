-- Console sessions of the project's own store: a row only for a
-- signed-in session, keyed by the SHA-256 of its id so that a leaked table
-- cannot be replayed as cookies; the account it belongs to (to end all of
-- an account's sessions at once), its last use and expiry, and where it
-- was started from, for a "your sessions" page. The gorm backend's table is
-- dropped: existing sessions end and staff sign in again.

-- +goose Up
DROP TABLE sessions;
CREATE TABLE sessions (
    id_hash    TEXT     NOT NULL PRIMARY KEY,
    user_id    INTEGER  NOT NULL,
    data       BLOB     NOT NULL,
    client_ip  TEXT     NOT NULL DEFAULT '',
    user_agent TEXT     NOT NULL DEFAULT '',
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    expires_at DATETIME NOT NULL
);
CREATE INDEX idx_sessions_user_id ON sessions (user_id);
CREATE INDEX idx_sessions_expires_at ON sessions (expires_at);

-- +goose Down
DROP TABLE sessions;
CREATE TABLE sessions (
    id         TEXT     NOT NULL PRIMARY KEY,
    data       TEXT     NOT NULL,
    created_at DATETIME NOT NULL,
    updated_at DATETIME NOT NULL,
    expires_at DATETIME NOT NULL
);
CREATE INDEX idx_sessions_expires_at ON sessions (expires_at);
