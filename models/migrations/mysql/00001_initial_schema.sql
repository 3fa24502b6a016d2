-- The first schema: pets, staff users, partner API keys and the audit trail.
-- Every table is utf8mb4 so names keep any Unicode character, emoji included.

-- +goose Up
CREATE TABLE pets (
    id          BIGINT       NOT NULL AUTO_INCREMENT,
    name        VARCHAR(255) NOT NULL,
    category_id BIGINT       NOT NULL,
    status      VARCHAR(16)  NOT NULL,
    created_at  DATETIME(6)  NOT NULL,
    updated_at  DATETIME(6)  NOT NULL,
    PRIMARY KEY (id),
    KEY idx_pets_status_id (status, id),
    CONSTRAINT chk_pets_status CHECK (status IN ('available', 'pending', 'sold')),
    CONSTRAINT chk_pets_category_id CHECK (category_id > 0)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

CREATE TABLE users (
    id            BIGINT       NOT NULL AUTO_INCREMENT,
    username      VARCHAR(64)  NOT NULL,
    password_hash VARCHAR(255) NOT NULL,
    created_at    DATETIME(6)  NOT NULL,
    updated_at    DATETIME(6)  NOT NULL,
    PRIMARY KEY (id),
    UNIQUE KEY idx_users_username (username)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

CREATE TABLE api_keys (
    id           BIGINT       NOT NULL AUTO_INCREMENT,
    name         VARCHAR(100) NOT NULL,
    prefix       VARCHAR(32)  NOT NULL,
    hash         CHAR(64)     NOT NULL,
    created_by   VARCHAR(64)  NOT NULL,
    created_at   DATETIME(6)  NOT NULL,
    last_used_at DATETIME(6)  NULL,
    revoked_at   DATETIME(6)  NULL,
    PRIMARY KEY (id),
    UNIQUE KEY idx_api_keys_prefix (prefix)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

CREATE TABLE audit_events (
    id          BIGINT        NOT NULL AUTO_INCREMENT,
    at          DATETIME(6)   NOT NULL,
    actor       VARCHAR(255)  NOT NULL,
    action      VARCHAR(50)   NOT NULL,
    target_type VARCHAR(20)   NOT NULL,
    target_id   BIGINT        NOT NULL,
    detail      TEXT          NOT NULL,
    PRIMARY KEY (id),
    KEY idx_audit_events_target (target_type, target_id, id),
    KEY idx_audit_events_action (action, id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- +goose Down
DROP TABLE audit_events;
DROP TABLE api_keys;
DROP TABLE users;
DROP TABLE pets;
