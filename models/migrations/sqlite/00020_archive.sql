-- The console's archive: an archived pet's row moves here out of pets, with
-- the same id and fields, and who archived it and when. See the MySQL
-- migration for why the row moves. pets' AUTOINCREMENT never gives an
-- archived pet's id again, so a restore finds its id free.

-- +goose Up
CREATE TABLE archived_pets (
    id          INTEGER  NOT NULL PRIMARY KEY,
    name        TEXT     NOT NULL,
    category_id INTEGER  NOT NULL,
    status      TEXT     NOT NULL,
    created_at  DATETIME NOT NULL,
    updated_at  DATETIME NOT NULL,
    version     INTEGER  NOT NULL,
    archived_at DATETIME NOT NULL,
    archived_by TEXT     NOT NULL
);
CREATE INDEX idx_archived_pets_archived ON archived_pets (archived_at, id);

-- +goose Down
DROP TABLE archived_pets;
