-- Console sessions of the project's own store: a row only for a
-- signed-in session, keyed by the SHA-256 of its id so that a leaked table
-- cannot be replayed as cookies; the account it belongs to (to end all of
-- an account's sessions at once), its last use and expiry, and where it
-- was started from, for a "your sessions" page. The gorm backend's table is
-- dropped: existing sessions end and staff sign in again.

-- +goose Up
DROP TABLE sessions;
CREATE TABLE sessions (
    id_hash    CHAR(64)     CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    user_id    BIGINT       NOT NULL,
    data       BLOB         NOT NULL,
    client_ip  VARCHAR(64)  NOT NULL DEFAULT '',
    user_agent VARCHAR(255) NOT NULL DEFAULT '',
    created_at DATETIME(6)  NOT NULL,
    updated_at DATETIME(6)  NOT NULL,
    expires_at DATETIME(6)  NOT NULL,
    PRIMARY KEY (id_hash),
    KEY idx_sessions_user_id (user_id),
    KEY idx_sessions_expires_at (expires_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- +goose Down
DROP TABLE sessions;
CREATE TABLE sessions (
    id         VARCHAR(64)  NOT NULL,
    data       MEDIUMTEXT   NOT NULL,
    created_at DATETIME(6)  NOT NULL,
    updated_at DATETIME(6)  NOT NULL,
    expires_at DATETIME(6)  NOT NULL,
    PRIMARY KEY (id),
    KEY idx_sessions_expires_at (expires_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;
