-- Scheduled backups: one row per interval (its start, in Unix seconds),
-- and its length, inserted by the instance that takes that interval's backup, so that of
-- several instances on one database only one takes it (the primary key
-- refuses the others' inserts); then its outcome, for the console's
-- operations page.

-- +goose Up
CREATE TABLE backups (
    slot             BIGINT        NOT NULL PRIMARY KEY,
    instance         VARCHAR(255)  NOT NULL,
    interval_seconds BIGINT        NOT NULL,
    started_at       DATETIME(6)   NOT NULL,
    finished_at      DATETIME(6)   NULL,
    file             VARCHAR(1024) NOT NULL DEFAULT '',
    size             BIGINT        NOT NULL DEFAULT 0,
    schema_version   BIGINT        NOT NULL DEFAULT 0,
    petstore_version VARCHAR(255)  NOT NULL DEFAULT '',
    error            VARCHAR(1024) NOT NULL DEFAULT ''
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- +goose Down
DROP TABLE backups;
