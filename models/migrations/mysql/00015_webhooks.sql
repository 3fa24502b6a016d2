-- Webhooks: endpoints admins register, and the deliveries of the change
-- feed's events to them (an outbox).
--
-- An endpoint's cursor_event_id is the last event fanned out to it: a
-- dispatcher turns the events after it into delivery rows and moves it, in
-- one transaction holding the endpoint's row, so no event is queued twice
-- or skipped (events are in commit order). lease_owner and lease_until
-- say which instance is delivering to the endpoint, one at a time; a lease
-- left by a dead instance runs out and another takes over. A delivery
-- keeps its body, so a retry sends the same bytes.

-- +goose Up
CREATE TABLE webhook_endpoints (
    id                   BIGINT        NOT NULL AUTO_INCREMENT,
    url                  VARCHAR(2000) NOT NULL,
    description          VARCHAR(255)  NOT NULL DEFAULT '',
    event_types          VARCHAR(255)  NOT NULL DEFAULT '',
    secret               VARCHAR(100)  NOT NULL,
    previous_secret      VARCHAR(100)  NULL,
    previous_expires_at  DATETIME(6)   NULL,
    enabled              BOOLEAN       NOT NULL DEFAULT TRUE,
    disabled_reason      VARCHAR(255)  NOT NULL DEFAULT '',
    cursor_event_id      BIGINT        NOT NULL,
    lease_owner          VARCHAR(64)   NULL,
    lease_until          DATETIME(6)   NULL,
    last_success_at      DATETIME(6)   NULL,
    failing_since        DATETIME(6)   NULL,
    consecutive_failures INT           NOT NULL DEFAULT 0,
    created_by           VARCHAR(64)   NOT NULL,
    created_at           DATETIME(6)   NOT NULL,
    updated_at           DATETIME(6)   NOT NULL,
    PRIMARY KEY (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

CREATE TABLE webhook_deliveries (
    id               BIGINT       NOT NULL AUTO_INCREMENT,
    endpoint_id      BIGINT       NOT NULL,
    event_id         VARCHAR(40)  NOT NULL,
    event_type       VARCHAR(32)  NOT NULL,
    body             MEDIUMTEXT   NOT NULL,
    status           VARCHAR(16)  NOT NULL,
    attempts         INT          NOT NULL DEFAULT 0,
    next_attempt_at  DATETIME(6)  NOT NULL,
    last_attempt_at  DATETIME(6)  NULL,
    last_status      INT          NULL,
    last_error       VARCHAR(255) NOT NULL DEFAULT '',
    last_duration_ms INT          NULL,
    created_at       DATETIME(6)  NOT NULL,
    delivered_at     DATETIME(6)  NULL,
    PRIMARY KEY (id),
    UNIQUE KEY idx_webhook_deliveries_event (endpoint_id, event_id),
    KEY idx_webhook_deliveries_due (status, next_attempt_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

-- +goose Down
DROP TABLE webhook_deliveries;
DROP TABLE webhook_endpoints;
