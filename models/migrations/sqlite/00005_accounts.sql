-- Staff account administration: an account can be disabled (its sign-in is
-- refused and its sessions end), and an account whose password was reset
-- must choose a new one at its next sign-in.

-- +goose Up
ALTER TABLE users ADD COLUMN disabled_at DATETIME NULL;
ALTER TABLE users ADD COLUMN must_change_password BOOLEAN NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE users DROP COLUMN must_change_password;
ALTER TABLE users DROP COLUMN disabled_at;
