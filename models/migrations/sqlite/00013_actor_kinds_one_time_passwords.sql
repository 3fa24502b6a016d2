-- Who acted is more than a name: actor_kind says whether a staff member,
-- an API key, the command line, the first start or an unknown account did
-- it, so that a staff account can never pass for the system. Repeated
-- refusals are kept as one row per member, route and minute: coalesce_key
-- names that row (NULL for every other event: NULLs never collide in a
-- unique index) and occurrences counts them. The one-time password of a
-- reset expires and signs in once (one_time_expires_at, one_time_used_at).

-- +goose Up
ALTER TABLE audit_events ADD COLUMN actor_kind TEXT NOT NULL DEFAULT 'staff';
ALTER TABLE audit_events ADD COLUMN occurrences INTEGER NOT NULL DEFAULT 1;
ALTER TABLE audit_events ADD COLUMN coalesce_key TEXT NULL;
CREATE UNIQUE INDEX idx_audit_events_coalesce_key ON audit_events (coalesce_key);
UPDATE audit_events SET actor_kind = 'cli' WHERE actor = 'cli';
UPDATE audit_events SET actor_kind = 'system' WHERE actor = 'bootstrap';
UPDATE audit_events SET actor_kind = 'apikey' WHERE actor LIKE 'apikey %';
UPDATE audit_events SET actor_kind = 'anonymous' WHERE actor IN ('(unknown account)', 'anonymous');
ALTER TABLE users ADD COLUMN one_time_expires_at DATETIME NULL;
ALTER TABLE users ADD COLUMN one_time_used_at DATETIME NULL;

-- +goose Down
ALTER TABLE users DROP COLUMN one_time_used_at;
ALTER TABLE users DROP COLUMN one_time_expires_at;
DROP INDEX idx_audit_events_coalesce_key;
ALTER TABLE audit_events DROP COLUMN coalesce_key;
ALTER TABLE audit_events DROP COLUMN occurrences;
ALTER TABLE audit_events DROP COLUMN actor_kind;
