-- Optimistic concurrency for the console's pet edits: every
-- write that changes a pet adds one to its version, and an edit is saved
-- only if the pet still has the version the form was loaded with. Existing
-- pets start at 1, as new ones do: the API's creates do not name the
-- column and take its default. ADD COLUMN with a constant default changes
-- only the schema, never the rows, so it is instant on a million pets.

-- +goose Up
ALTER TABLE pets ADD COLUMN version INTEGER NOT NULL DEFAULT 1;

-- +goose Down
ALTER TABLE pets DROP COLUMN version;
