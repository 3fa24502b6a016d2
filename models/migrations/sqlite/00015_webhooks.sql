-- Webhooks: endpoints admins register, and the deliveries of the change
-- feed's events to them (an outbox). See the MySQL migration for how the
-- cursor and the lease are used.

-- +goose Up
CREATE TABLE webhook_endpoints (
    id                   INTEGER  NOT NULL PRIMARY KEY AUTOINCREMENT,
    url                  TEXT     NOT NULL,
    description          TEXT     NOT NULL DEFAULT '',
    event_types          TEXT     NOT NULL DEFAULT '',
    secret               TEXT     NOT NULL,
    previous_secret      TEXT     NULL,
    previous_expires_at  DATETIME NULL,
    enabled              BOOLEAN  NOT NULL DEFAULT TRUE,
    disabled_reason      TEXT     NOT NULL DEFAULT '',
    cursor_event_id      INTEGER  NOT NULL,
    lease_owner          TEXT     NULL,
    lease_until          DATETIME NULL,
    last_success_at      DATETIME NULL,
    failing_since        DATETIME NULL,
    consecutive_failures INTEGER  NOT NULL DEFAULT 0,
    created_by           TEXT     NOT NULL,
    created_at           DATETIME NOT NULL,
    updated_at           DATETIME NOT NULL
);

CREATE TABLE webhook_deliveries (
    id               INTEGER  NOT NULL PRIMARY KEY AUTOINCREMENT,
    endpoint_id      INTEGER  NOT NULL,
    event_id         TEXT     NOT NULL,
    event_type       TEXT     NOT NULL,
    body             TEXT     NOT NULL,
    status           TEXT     NOT NULL,
    attempts         INTEGER  NOT NULL DEFAULT 0,
    next_attempt_at  DATETIME NOT NULL,
    last_attempt_at  DATETIME NULL,
    last_status      INTEGER  NULL,
    last_error       TEXT     NOT NULL DEFAULT '',
    last_duration_ms INTEGER  NULL,
    created_at       DATETIME NOT NULL,
    delivered_at     DATETIME NULL
);
CREATE UNIQUE INDEX idx_webhook_deliveries_event ON webhook_deliveries (endpoint_id, event_id);
CREATE INDEX idx_webhook_deliveries_due ON webhook_deliveries (status, next_attempt_at);

-- +goose Down
DROP TABLE webhook_deliveries;
DROP TABLE webhook_endpoints;
