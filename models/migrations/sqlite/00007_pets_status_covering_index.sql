-- The API's status-filtered pages read id, name, category_id and status in
-- (status, id) order. With those columns in the index a page is read from
-- the index alone instead of one table lookup per pet, whose cost grows
-- with the table's depth: a 100-pet page of one status took 75 us on a
-- million pets and 59 us on a thousand before, 40 and 35 us after. The
-- index replaces (status, id), which it starts with. Building it on a
-- million pets takes a few seconds.

-- +goose Up
CREATE INDEX idx_pets_status_list ON pets (status, id, category_id, name);
DROP INDEX idx_pets_status_id;

-- +goose Down
CREATE INDEX idx_pets_status_id ON pets (status, id);
DROP INDEX idx_pets_status_list;
