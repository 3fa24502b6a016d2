-- Who acted is more than a name: actor_kind says whether a staff member,
-- an API key, the command line, the first start or an unknown account did
-- it, so that a staff account can never pass for the system. Repeated
-- refusals are kept as one row per member, route and minute: coalesce_key
-- names that row (NULL for every other event: NULLs never collide in a
-- unique index) and occurrences counts them. The one-time password of a
-- reset expires and signs in once (one_time_expires_at, one_time_used_at).

-- +goose Up
ALTER TABLE audit_events
    ADD COLUMN actor_kind VARCHAR(16) NOT NULL DEFAULT 'staff',
    ADD COLUMN occurrences INT NOT NULL DEFAULT 1,
    ADD COLUMN coalesce_key VARCHAR(191) NULL,
    ADD UNIQUE KEY idx_audit_events_coalesce_key (coalesce_key);
UPDATE audit_events SET actor_kind = 'cli' WHERE actor = 'cli';
UPDATE audit_events SET actor_kind = 'system' WHERE actor = 'bootstrap';
UPDATE audit_events SET actor_kind = 'apikey' WHERE actor LIKE 'apikey %';
UPDATE audit_events SET actor_kind = 'anonymous' WHERE actor IN ('(unknown account)', 'anonymous');
ALTER TABLE users
    ADD COLUMN one_time_expires_at DATETIME(6) NULL,
    ADD COLUMN one_time_used_at DATETIME(6) NULL;

-- +goose Down
ALTER TABLE users
    DROP COLUMN one_time_used_at,
    DROP COLUMN one_time_expires_at;
ALTER TABLE audit_events
    DROP INDEX idx_audit_events_coalesce_key,
    DROP COLUMN coalesce_key,
    DROP COLUMN occurrences,
    DROP COLUMN actor_kind;
