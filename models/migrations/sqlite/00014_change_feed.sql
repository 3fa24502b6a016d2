-- The change feed: one row per change of a pet, written in the change's own
-- transaction, holding the pet as it stood after the change.
--
-- An event's id is its place in the feed, given by event_clock's 'seq' row
-- (SQLite has one writer, so ids are given in commit order; the clock
-- keeps ids from being given again after a purge emptied the table, as a
-- rowid would). 'purged' is the highest id the retention purge has
-- deleted: a cursor below it has lost events.

-- +goose Up
CREATE TABLE events (
    id          INTEGER  NOT NULL PRIMARY KEY,
    type        TEXT     NOT NULL,
    occurred_at DATETIME NOT NULL,
    changed     TEXT     NOT NULL DEFAULT '',
    pet_id      INTEGER  NOT NULL,
    name        TEXT     NOT NULL,
    category_id INTEGER  NOT NULL,
    status      TEXT     NOT NULL
);

CREATE TABLE event_clock (
    name  TEXT    NOT NULL PRIMARY KEY,
    value INTEGER NOT NULL
);

INSERT INTO event_clock (name, value) VALUES ('seq', 0), ('purged', 0);

-- +goose Down
DROP TABLE event_clock;
DROP TABLE events;
