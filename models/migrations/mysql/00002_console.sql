-- The admin console: server-side sessions (the gin-contrib/sessions gorm
-- backend's table), shared settings such as the session keys, failed logins
-- for rate limiting, and a per-user session version so that changing a
-- password signs out the account's other sessions.

-- +goose Up
CREATE TABLE sessions (
    id         VARCHAR(64)  NOT NULL,
    data       MEDIUMTEXT   NOT NULL,
    created_at DATETIME(6)  NOT NULL,
    updated_at DATETIME(6)  NOT NULL,
    expires_at DATETIME(6)  NOT NULL,
    PRIMARY KEY (id),
    KEY idx_sessions_expires_at (expires_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

CREATE TABLE settings (
    name       VARCHAR(64)  NOT NULL,
    value      VARCHAR(255) NOT NULL,
    created_at DATETIME(6)  NOT NULL,
    PRIMARY KEY (name)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

CREATE TABLE login_failures (
    id        BIGINT      NOT NULL AUTO_INCREMENT,
    username  VARCHAR(64) NOT NULL,
    client_ip VARCHAR(64) NOT NULL,
    at        DATETIME(6) NOT NULL,
    PRIMARY KEY (id),
    KEY idx_login_failures_username (username, at),
    KEY idx_login_failures_client_ip (client_ip, at),
    KEY idx_login_failures_at (at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

ALTER TABLE users ADD COLUMN session_version BIGINT NOT NULL DEFAULT 1;

-- +goose Down
ALTER TABLE users DROP COLUMN session_version;
DROP TABLE login_failures;
DROP TABLE settings;
DROP TABLE sessions;
