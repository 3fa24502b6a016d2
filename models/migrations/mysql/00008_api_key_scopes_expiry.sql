-- API keys get scopes, an optional expiry and the time of their last call of
-- the deprecated GET /v1/pets/{petId}. Scopes are the names
-- separated by spaces; the keys made before scopes existed keep what they
-- could do, both pets scopes. metrics:read is never a default.

-- +goose Up
ALTER TABLE api_keys
    ADD COLUMN scopes VARCHAR(255) NOT NULL DEFAULT 'pets:read pets:write',
    ADD COLUMN expires_at DATETIME(6) NULL,
    ADD COLUMN deprecated_call_at DATETIME(6) NULL;

-- +goose Down
ALTER TABLE api_keys
    DROP COLUMN deprecated_call_at,
    DROP COLUMN expires_at,
    DROP COLUMN scopes;
