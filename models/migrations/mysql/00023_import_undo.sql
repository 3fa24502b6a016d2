-- An import is one undoable action (undo_actions) written over many
-- transactions, possibly by several instances in turn (a runner that dies
-- is resumed by another): undo_id names the action, so that whoever writes
-- the next chunk records its pets under it, and whoever ends the import
-- completes it. NULL for an import that has not started.

-- +goose Up
ALTER TABLE imports ADD COLUMN undo_id BIGINT NULL;

-- +goose Down
ALTER TABLE imports DROP COLUMN undo_id;
