-- qore serve's request log: one row per request (see the crate's request_log module),
-- newest first by id (a ULID of the start time), pruned by start time.
CREATE TABLE request_log (
    id            TEXT COLLATE "C" PRIMARY KEY,
    at_ms         BIGINT NOT NULL,
    key_id        TEXT COLLATE "C" NOT NULL DEFAULT '',
    dialect       TEXT COLLATE "C" NOT NULL DEFAULT '',
    model         TEXT COLLATE "C" NOT NULL DEFAULT '',
    agent         TEXT COLLATE "C" NOT NULL DEFAULT '',
    upstream      TEXT COLLATE "C" NOT NULL DEFAULT '',
    status        INTEGER NOT NULL,
    error_kind    TEXT COLLATE "C" NOT NULL DEFAULT '',
    tokens_in     BIGINT NOT NULL DEFAULT 0,
    tokens_out    BIGINT NOT NULL DEFAULT 0,
    cost_micros   BIGINT,
    ttfb_ms       BIGINT,
    duration_ms   BIGINT NOT NULL DEFAULT 0,
    session_id    TEXT COLLATE "C" NOT NULL DEFAULT '',
    response_id   TEXT COLLATE "C" NOT NULL DEFAULT '',
    request_body  TEXT COLLATE "C",
    response_body TEXT COLLATE "C"
);
CREATE INDEX request_log_at ON request_log(at_ms);
CREATE INDEX request_log_key ON request_log(key_id, id);
