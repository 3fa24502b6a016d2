-- CSV imports of pets. See the MySQL migration for what each table holds.

-- +goose Up
CREATE TABLE imports (
    id           INTEGER  NOT NULL PRIMARY KEY AUTOINCREMENT,
    content_hash TEXT     NOT NULL,
    file_name    TEXT     NOT NULL DEFAULT '',
    state        TEXT     NOT NULL,
    actor        TEXT     NOT NULL,
    rows_valid   INTEGER  NOT NULL DEFAULT 0,
    rows_invalid INTEGER  NOT NULL DEFAULT 0,
    done         INTEGER  NOT NULL DEFAULT 0,
    lease_owner  TEXT     NOT NULL DEFAULT '',
    lease_until  DATETIME NULL,
    error        TEXT     NOT NULL DEFAULT '',
    created_at   DATETIME NOT NULL,
    updated_at   DATETIME NOT NULL,
    started_at   DATETIME NULL,
    finished_at  DATETIME NULL
);

CREATE UNIQUE INDEX idx_imports_content_hash ON imports (content_hash);

CREATE TABLE import_files (
    import_id INTEGER NOT NULL PRIMARY KEY,
    data      BLOB    NOT NULL
);

CREATE TABLE import_pets (
    import_id INTEGER NOT NULL,
    first_id  INTEGER NOT NULL,
    last_id   INTEGER NOT NULL,
    PRIMARY KEY (import_id, first_id)
);

-- +goose Down
DROP TABLE import_pets;
DROP TABLE import_files;
DROP TABLE imports;
