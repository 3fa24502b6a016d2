-- An import's undoable action. See the MySQL migration for why.

-- +goose Up
ALTER TABLE imports ADD COLUMN undo_id INTEGER NULL;

-- +goose Down
ALTER TABLE imports DROP COLUMN undo_id;
