-- The console's name search index (models/search.go): one row per distinct
-- word of each pet's name, folded and cut to 32 bytes by the application,
-- keyed by (word, pet_id) so that a word, or the start of one, is a key
-- range read newest first. VARBINARY: compared byte by byte, as on SQLite,
-- whatever the collation. No FULLTEXT index: InnoDB's reads every match of
-- a common word before it can sort them newest first, and its tokenizer,
-- minimum word length and stopwords differ from SQLite's. The application
-- fills it for the pets that already exist after this migration
-- (Store.Migrate, while the setting below says 'building').

-- +goose Up
CREATE TABLE pet_name_words (
    word   VARBINARY(32) NOT NULL,
    pet_id BIGINT        NOT NULL,
    PRIMARY KEY (word, pet_id)
) ENGINE = InnoDB;
INSERT INTO settings (name, value, created_at) VALUES ('pets.name_index', 'building', UTC_TIMESTAMP(6));

-- +goose Down
DELETE FROM settings WHERE name = 'pets.name_index';
DROP TABLE pet_name_words;
