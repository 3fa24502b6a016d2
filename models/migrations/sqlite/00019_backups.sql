-- Scheduled backups: one row per interval (its start, in Unix seconds),
-- and its length, inserted by the instance that takes that interval's backup, so that of
-- several instances on one database only one takes it; then its outcome,
-- for the console's operations page.

-- +goose Up
CREATE TABLE backups (
    slot             INTEGER  NOT NULL PRIMARY KEY,
    instance         TEXT     NOT NULL,
    interval_seconds INTEGER  NOT NULL,
    started_at       DATETIME NOT NULL,
    finished_at      DATETIME NULL,
    file             TEXT     NOT NULL DEFAULT '',
    size             INTEGER  NOT NULL DEFAULT 0,
    schema_version   INTEGER  NOT NULL DEFAULT 0,
    petstore_version TEXT     NOT NULL DEFAULT '',
    error            TEXT     NOT NULL DEFAULT ''
);

-- +goose Down
DROP TABLE backups;
