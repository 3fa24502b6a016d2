-- Staff roles: every account is a viewer, an editor or an admin.
-- The accounts that exist when this runs become admins: until now every
-- staff member could do everything, so nobody loses an ability they had
-- and the console is never left without an admin; admins then lower the
-- roles they want lower. The column's default, for rows written by other
-- means, is the least surprising everyday role (editor); the store always
-- writes a role of its own. Binary collation: the check takes the three
-- values exactly as written, not "ADMIN".

-- +goose Up
ALTER TABLE users
    ADD COLUMN role VARCHAR(16) COLLATE utf8mb4_bin NOT NULL DEFAULT 'editor',
    ADD CONSTRAINT chk_users_role CHECK (role IN ('viewer', 'editor', 'admin'));
UPDATE users SET role = 'admin';

-- +goose Down
ALTER TABLE users
    DROP CONSTRAINT chk_users_role,
    DROP COLUMN role;
