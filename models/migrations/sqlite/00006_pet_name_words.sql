-- The console's name search index (models/search.go): one row per distinct
-- word of each pet's name, folded and cut to 32 bytes by the application,
-- keyed by (word, pet_id) so that a word, or the start of one, is a key
-- range read newest first. Words are BLOBs: compared byte by byte, as on
-- MySQL. The application fills it for the pets that already exist after
-- this migration (Store.Migrate, while the setting below says 'building').

-- +goose Up
CREATE TABLE pet_name_words (
    word   BLOB    NOT NULL,
    pet_id INTEGER NOT NULL,
    PRIMARY KEY (word, pet_id)
) WITHOUT ROWID;
INSERT INTO settings (name, value, created_at) VALUES ('pets.name_index', 'building', CURRENT_TIMESTAMP);

-- +goose Down
DELETE FROM settings WHERE name = 'pets.name_index';
DROP TABLE pet_name_words;
