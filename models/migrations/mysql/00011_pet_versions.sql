-- Optimistic concurrency for the console's pet edits: every
-- write that changes a pet adds one to its version, and an edit is saved
-- only if the pet still has the version the form was loaded with. Existing
-- pets start at 1, as new ones do: the API's creates do not name the
-- column and take its default. ALGORITHM=INSTANT changes only InnoDB's
-- metadata (MariaDB 10.3 and later; MySQL 8.0.12 and later for a last
-- column), not the rows, so the ALTER takes as long on a million pets as
-- on none; a server that cannot do it instantly fails the statement
-- instead of copying the table under a lock.

-- +goose Up
ALTER TABLE pets ADD COLUMN version INT NOT NULL DEFAULT 1, ALGORITHM=INSTANT;

-- +goose Down
ALTER TABLE pets DROP COLUMN version;
