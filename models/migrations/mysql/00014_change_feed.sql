-- The change feed: one row per change of a pet, written in the change's own
-- transaction, holding the pet as it stood after the change.
--
-- An event's id is its place in the feed, given by event_clock's 'seq' row
-- and not by AUTO_INCREMENT: a writer adds its events last, after updating
-- 'seq', whose row lock it then holds until it commits, so ids are given
-- in commit order and a reader of "id > cursor" can never step past an
-- event that commits later (docs/architecture.md). 'purged' is the highest
-- id the retention purge has deleted: a cursor below it has lost events.

-- +goose Up
CREATE TABLE events (
    id          BIGINT       NOT NULL,
    type        VARCHAR(16)  NOT NULL,
    occurred_at DATETIME(6)  NOT NULL,
    changed     VARCHAR(40)  NOT NULL DEFAULT '',
    pet_id      BIGINT       NOT NULL,
    name        VARCHAR(255) NOT NULL,
    category_id BIGINT       NOT NULL,
    status      VARCHAR(16)  NOT NULL,
    PRIMARY KEY (id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

CREATE TABLE event_clock (
    name  VARCHAR(16) NOT NULL,
    value BIGINT      NOT NULL,
    PRIMARY KEY (name)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci;

INSERT INTO event_clock (name, value) VALUES ('seq', 0), ('purged', 0);

-- +goose Down
DROP TABLE event_clock;
DROP TABLE events;
