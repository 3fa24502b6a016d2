-- Undo: every console change of pets is an action its member may undo for
-- a while (UNDO_WINDOW). See the MySQL migration for what each column
-- holds.

-- +goose Up
CREATE TABLE undo_actions (
    id               INTEGER  NOT NULL PRIMARY KEY AUTOINCREMENT,
    actor            TEXT     NOT NULL,
    kind             TEXT     NOT NULL,
    summary          TEXT     NOT NULL DEFAULT '',
    created_at       DATETIME NOT NULL,
    completed_at     DATETIME NULL,
    bulk_job_id      INTEGER  NULL,
    undoes_id        INTEGER  NULL,
    undone_at        DATETIME NULL,
    undone_by        TEXT     NULL,
    undone_by_action INTEGER  NULL,
    state            TEXT     NOT NULL DEFAULT '',
    total            INTEGER  NOT NULL DEFAULT 0,
    processed        INTEGER  NOT NULL DEFAULT 0,
    reverted         INTEGER  NOT NULL DEFAULT 0,
    skipped          INTEGER  NOT NULL DEFAULT 0,
    skipped_by       TEXT     NOT NULL DEFAULT '',
    skipped_pets     TEXT     NULL,
    lease_owner      TEXT     NOT NULL DEFAULT '',
    lease_until      DATETIME NULL,
    error            TEXT     NOT NULL DEFAULT ''
);

CREATE INDEX idx_undo_actions_actor ON undo_actions (actor, id);
CREATE INDEX idx_undo_actions_completed ON undo_actions (completed_at);
CREATE INDEX idx_undo_actions_bulk_job ON undo_actions (bulk_job_id);

CREATE TABLE undo_items (
    id            INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    action_id     INTEGER NOT NULL,
    pet_id        INTEGER NOT NULL,
    version_after INTEGER NOT NULL,
    name          TEXT    NOT NULL,
    category_id   INTEGER NOT NULL,
    status        TEXT    NOT NULL
);

CREATE INDEX idx_undo_items_action ON undo_items (action_id, id);

-- +goose Down
DROP TABLE undo_items;
DROP TABLE undo_actions;
