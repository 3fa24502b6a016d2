-- The pets page's numbers at a glance: how many pets are in
-- each status, exact and cheap on a million pets. Every write that changes
-- how many pets a status has inserts signed deltas here in its own
-- transaction (a create batch one row per status it holds, a status change
-- -1 and +1); the count is SUM(delta) by status. Rows are only ever
-- inserted by writes, never updated; compaction (statuscounts.go) folds
-- old rows into one per status now and then, keeping the table a few rows
-- long. The id is the rowid (no AUTOINCREMENT, whose sqlite_sequence row
-- every insert would update): an id given again after the rows above it
-- were folded away is harmless, as ids only order the rows.
-- The INSERT ... SELECT below starts existing databases at their exact
-- counts, read from the (status, id) index.

-- +goose Up
CREATE TABLE pet_status_counts (
    id     INTEGER PRIMARY KEY,
    status TEXT    NOT NULL,
    delta  INTEGER NOT NULL
);

INSERT INTO pet_status_counts (status, delta)
SELECT status, COUNT(*) FROM pets GROUP BY status;

-- +goose Down
DROP TABLE pet_status_counts;
