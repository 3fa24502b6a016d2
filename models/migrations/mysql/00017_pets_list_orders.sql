-- The console's list sorts by created time, name or category, either way,
-- filtered by status and by category, and pages by keyset on (sort key,
-- id). Each index below serves the sorts and filters it names as one
-- range read in index order, so that every page costs the same on a
-- million pets as on a thousand, wherever it lies:
--   created    (created_at, id)                  also a date range
--   name       (name, id)
--   category   (category_id, id)                 also the category filter
--                                                 with any sort of that
--                                                 category's pets by id
--   status and created or category: the same, status first (a status
--                 follows time and categories: old pets are mostly sold)
--   category and created or name: the same, category first
-- A status filter in name order reads the name index and checks each
-- pet's status: names do not follow status, and the long key of a
-- (status, name, id) index would cost every create more than the others.
-- With both status and category, the category's index is read and the
-- status checked on each pet. Every create writes these entries too: the
-- price of sorting a large catalogue without a scan.

-- +goose Up
CREATE INDEX idx_pets_created ON pets (created_at, id);
CREATE INDEX idx_pets_name ON pets (name, id);
CREATE INDEX idx_pets_category ON pets (category_id, id);
CREATE INDEX idx_pets_status_created ON pets (status, created_at, id);
CREATE INDEX idx_pets_status_category ON pets (status, category_id, id);
CREATE INDEX idx_pets_category_created ON pets (category_id, created_at, id);
CREATE INDEX idx_pets_category_name ON pets (category_id, name, id);

-- +goose Down
DROP INDEX idx_pets_created ON pets;
DROP INDEX idx_pets_name ON pets;
DROP INDEX idx_pets_category ON pets;
DROP INDEX idx_pets_status_created ON pets;
DROP INDEX idx_pets_status_category ON pets;
DROP INDEX idx_pets_category_created ON pets;
DROP INDEX idx_pets_category_name ON pets;
