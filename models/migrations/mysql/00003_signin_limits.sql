-- Sign-in limits reserved before the password is checked (see
-- models/signin.go), in place of the failed sign-ins counted afterwards.
-- A row per limit, keyed by the SHA-256 of what it limits, so that what was
-- typed as a username is never stored. Usernames compare exactly (binary):
-- a look-alike such as 'ádmin' is not 'admin'.

-- +goose Up
CREATE TABLE login_limits (
    name         CHAR(64)    CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
    checks       INT         NOT NULL,
    window_start DATETIME(6) NOT NULL,
    next_at      DATETIME(6) NOT NULL,
    updated_at   DATETIME(6) NOT NULL,
    PRIMARY KEY (name),
    KEY idx_login_limits_updated_at (updated_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

DROP TABLE login_failures;

ALTER TABLE users MODIFY username VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL;

-- +goose Down
ALTER TABLE users MODIFY username VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci NOT NULL;

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

DROP TABLE login_limits;
