-- Bulk jobs: a change of every pet matching a console filter, run in the
-- background a chunk at a time. See the MySQL migration for how
-- running_slot and the lease are used.

-- +goose Up
CREATE TABLE bulk_jobs (
    id            INTEGER  NOT NULL PRIMARY KEY AUTOINCREMENT,
    kind          TEXT     NOT NULL,
    filter        TEXT     NOT NULL DEFAULT '',
    target_status TEXT     NOT NULL,
    actor         TEXT     NOT NULL,
    state         TEXT     NOT NULL,
    running_slot  INTEGER  NULL,
    total         INTEGER  NOT NULL DEFAULT 0,
    processed     INTEGER  NOT NULL DEFAULT 0,
    changed       INTEGER  NOT NULL DEFAULT 0,
    already       INTEGER  NOT NULL DEFAULT 0,
    stale         INTEGER  NOT NULL DEFAULT 0,
    lease_owner   TEXT     NOT NULL,
    lease_until   DATETIME NOT NULL,
    error         TEXT     NOT NULL DEFAULT '',
    created_at    DATETIME NOT NULL,
    updated_at    DATETIME NOT NULL,
    finished_at   DATETIME NULL
);

CREATE UNIQUE INDEX idx_bulk_jobs_running ON bulk_jobs (running_slot);

-- +goose Down
DROP TABLE bulk_jobs;
