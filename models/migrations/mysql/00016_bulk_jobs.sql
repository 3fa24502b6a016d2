-- Bulk jobs: a change of every pet matching a console filter, run in the
-- background a chunk at a time. The row is the job's state for every
-- instance: its progress, and who runs it.
--
-- running_slot is 1 while a job runs and NULL once it has ended; its
-- unique index lets at most one job run at a time, whichever instance
-- starts it: a second INSERT with running_slot = 1 fails on the index.
-- lease_owner and lease_until say which process runs the job; the runner
-- moves lease_until forward after every chunk, and a job whose lease has
-- run out (its process died) is marked failed by the next one to look.

-- +goose Up
CREATE TABLE bulk_jobs (
    id            BIGINT        NOT NULL AUTO_INCREMENT,
    kind          VARCHAR(32)   NOT NULL,
    filter        VARCHAR(2000) NOT NULL DEFAULT '',
    target_status VARCHAR(16)   NOT NULL,
    actor         VARCHAR(64)   NOT NULL,
    state         VARCHAR(16)   NOT NULL,
    running_slot  TINYINT       NULL,
    total         INT           NOT NULL DEFAULT 0,
    processed     INT           NOT NULL DEFAULT 0,
    changed       INT           NOT NULL DEFAULT 0,
    already       INT           NOT NULL DEFAULT 0,
    stale         INT           NOT NULL DEFAULT 0,
    lease_owner   VARCHAR(64)   NOT NULL,
    lease_until   DATETIME(6)   NOT NULL,
    error         VARCHAR(255)  NOT NULL DEFAULT '',
    created_at    DATETIME(6)   NOT NULL,
    updated_at    DATETIME(6)   NOT NULL,
    finished_at   DATETIME(6)   NULL,
    PRIMARY KEY (id),
    UNIQUE KEY idx_bulk_jobs_running (running_slot)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- +goose Down
DROP TABLE bulk_jobs;
