-- Undo: every console change of pets is an action its member may undo for
-- a while (UNDO_WINDOW), recorded in the change's own transaction.
--
-- undo_actions is one row per action: who, what in words, when it was
-- complete (completed_at; NULL while a bulk job or a large undo is still
-- writing its pets), and once undone, when, by whom and which action undid
-- it (undone_by_action). An undo is itself an action (kind 'undo',
-- undoes_id naming the action it undid): a large one runs in the
-- background, and its row holds its progress (state, counts, lease) as a
-- bulk job's does. A bulk job's action names the job (bulk_job_id).
--
-- undo_items are the pets an action wrote: each one's version after the
-- action and its values before it. An undo puts those values back only
-- where the pet still has that version. Rows older than the window are
-- purged in the background, a bounded batch at a time.

-- +goose Up
CREATE TABLE undo_actions (
    id               BIGINT        NOT NULL AUTO_INCREMENT,
    actor            VARCHAR(255)  NOT NULL,
    kind             VARCHAR(32)   NOT NULL,
    summary          VARCHAR(500)  NOT NULL DEFAULT '',
    created_at       DATETIME(6)   NOT NULL,
    completed_at     DATETIME(6)   NULL,
    bulk_job_id      BIGINT        NULL,
    undoes_id        BIGINT        NULL,
    undone_at        DATETIME(6)   NULL,
    undone_by        VARCHAR(255)  NULL,
    undone_by_action BIGINT        NULL,
    state            VARCHAR(16)   NOT NULL DEFAULT '',
    total            INT           NOT NULL DEFAULT 0,
    processed        INT           NOT NULL DEFAULT 0,
    reverted         INT           NOT NULL DEFAULT 0,
    skipped          INT           NOT NULL DEFAULT 0,
    skipped_by       VARCHAR(1000) NOT NULL DEFAULT '',
    skipped_pets     TEXT          NULL,
    lease_owner      VARCHAR(64)   NOT NULL DEFAULT '',
    lease_until      DATETIME(6)   NULL,
    error            VARCHAR(255)  NOT NULL DEFAULT '',
    PRIMARY KEY (id),
    KEY idx_undo_actions_actor (actor, id),
    KEY idx_undo_actions_completed (completed_at),
    KEY idx_undo_actions_bulk_job (bulk_job_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

CREATE TABLE undo_items (
    id            BIGINT       NOT NULL AUTO_INCREMENT,
    action_id     BIGINT       NOT NULL,
    pet_id        BIGINT       NOT NULL,
    version_after BIGINT       NOT NULL,
    name          VARCHAR(255) NOT NULL,
    category_id   BIGINT       NOT NULL,
    status        VARCHAR(16)  NOT NULL,
    PRIMARY KEY (id),
    KEY idx_undo_items_action (action_id, id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- +goose Down
DROP TABLE undo_items;
DROP TABLE undo_actions;
