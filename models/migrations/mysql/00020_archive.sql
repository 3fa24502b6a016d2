-- The console's archive: an archived pet's row moves here out of pets, with
-- the same id and fields, and who archived it and when. Every list, count,
-- search and export of pets, and the partner API's reads, then leave it
-- out without a condition of their own. A restore moves the row back with
-- its id; ids are never given twice (InnoDB keeps its counter), so the id
-- is still free. Rows older than ARCHIVE_RETENTION are purged in the
-- background, oldest first, by the (archived_at, id) index, which also
-- pages the archive's list newest first.

-- +goose Up
CREATE TABLE archived_pets (
    id          BIGINT       NOT NULL,
    name        VARCHAR(255) NOT NULL,
    category_id BIGINT       NOT NULL,
    status      VARCHAR(16)  NOT NULL,
    created_at  DATETIME(6)  NOT NULL,
    updated_at  DATETIME(6)  NOT NULL,
    version     INT          NOT NULL,
    archived_at DATETIME(6)  NOT NULL,
    archived_by VARCHAR(255) NOT NULL,
    PRIMARY KEY (id),
    KEY idx_archived_pets_archived (archived_at, id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- +goose Down
DROP TABLE archived_pets;
