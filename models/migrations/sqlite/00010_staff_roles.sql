-- Staff roles: every account is a viewer, an editor or an admin.
-- The accounts that exist when this runs become admins: until now every
-- staff member could do everything, so nobody loses an ability they had
-- and the console is never left without an admin; admins then lower the
-- roles they want lower. The column's default, for rows written by other
-- means, is the least surprising everyday role (editor); the store always
-- writes a role of its own.

-- +goose Up
ALTER TABLE users ADD COLUMN role TEXT NOT NULL DEFAULT 'editor' CHECK (role IN ('viewer', 'editor', 'admin'));
UPDATE users SET role = 'admin';

-- +goose Down
ALTER TABLE users DROP COLUMN role;
