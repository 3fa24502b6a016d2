-- CSV imports of pets.
--
-- imports: one row per distinct content (content_hash, the SHA-256 of the
-- file's rows, unique: the same rows uploaded twice, even at once from two
-- sessions, are one import). state is preview (uploaded, nothing written),
-- running, done or failed; done counts the valid rows written so far and
-- moves forward in the same transaction as each chunk of pets, so a runner
-- that resumes starts exactly after the last committed chunk. lease_owner
-- and lease_until say which process runs it; a lease that ran out (its
-- process died) is taken over by the next instance that looks.
--
-- import_files: the uploaded file, gzip'd, kept in the database (not on an
-- instance's disk) from the upload until the import is done, so that the
-- preview and the import may be served by different instances.
--
-- import_pets: the ids each import gave, as runs of consecutive ids, so
-- that an import can be found and undone as one action.

-- +goose Up
CREATE TABLE imports (
    id           BIGINT       NOT NULL AUTO_INCREMENT,
    content_hash CHAR(64)     NOT NULL,
    file_name    VARCHAR(255) NOT NULL DEFAULT '',
    state        VARCHAR(16)  NOT NULL,
    actor        VARCHAR(64)  NOT NULL,
    rows_valid   INT          NOT NULL DEFAULT 0,
    rows_invalid INT          NOT NULL DEFAULT 0,
    done         INT          NOT NULL DEFAULT 0,
    lease_owner  VARCHAR(64)  NOT NULL DEFAULT '',
    lease_until  DATETIME(6)  NULL,
    error        VARCHAR(255) NOT NULL DEFAULT '',
    created_at   DATETIME(6)  NOT NULL,
    updated_at   DATETIME(6)  NOT NULL,
    started_at   DATETIME(6)  NULL,
    finished_at  DATETIME(6)  NULL,
    PRIMARY KEY (id),
    UNIQUE KEY idx_imports_content_hash (content_hash)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

CREATE TABLE import_files (
    import_id BIGINT   NOT NULL,
    data      LONGBLOB NOT NULL,
    PRIMARY KEY (import_id)
) ENGINE = InnoDB;

CREATE TABLE import_pets (
    import_id BIGINT NOT NULL,
    first_id  BIGINT NOT NULL,
    last_id   BIGINT NOT NULL,
    PRIMARY KEY (import_id, first_id)
) ENGINE = InnoDB;

-- +goose Down
DROP TABLE import_pets;
DROP TABLE import_files;
DROP TABLE imports;
