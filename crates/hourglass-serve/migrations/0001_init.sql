-- hourglass serve, schema 1. Portable SQL: the same file runs on SQLite and PostgreSQL
-- (BYTEA has blob storage in SQLite; times are Unix milliseconds in BIGINT).

-- Puzzle sets. `set_json` is served byte for byte; a private set's keys are sealed with the
-- data directory's vault key (XChaCha20-Poly1305), never stored in the clear, never served.
CREATE TABLE sets (
    name TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    set_json TEXT NOT NULL,
    set_sha256 TEXT NOT NULL,
    sealed_keys BYTEA,
    deadline_ms BIGINT,
    created_ms BIGINT NOT NULL
);

-- Which set a bundle belongs to: every puzzle fingerprint of a private set, the fingerprint of
-- a public set.
CREATE TABLE set_puzzles (
    fingerprint TEXT PRIMARY KEY,
    set_name TEXT NOT NULL REFERENCES sets (name)
);

-- Submissions and the verification queue. `id` is derived from the bundle and the document,
-- so the same submission twice is one row.
CREATE TABLE submissions (
    id TEXT PRIMARY KEY,
    set_name TEXT NOT NULL REFERENCES sets (name),
    received_ms BIGINT NOT NULL,
    bundle TEXT NOT NULL,
    bundle_sha256 TEXT NOT NULL,
    document_sha256 TEXT NOT NULL,
    document_digest TEXT NOT NULL,
    document_bytes BIGINT NOT NULL,
    status TEXT NOT NULL,
    credited_ms BIGINT,
    links_json TEXT,
    reason TEXT,
    receipt TEXT,
    verified_ms BIGINT
);
CREATE INDEX submissions_queue ON submissions (status, received_ms);

-- The documents themselves, apart from the queue's rows.
CREATE TABLE documents (
    id TEXT PRIMARY KEY REFERENCES submissions (id),
    content BYTEA NOT NULL
);

-- One row per verification that was recorded, with the server that did it (a submission is
-- verified once: the tests count these rows).
CREATE TABLE verifications (
    submission_id TEXT NOT NULL REFERENCES submissions (id),
    server TEXT NOT NULL,
    at_ms BIGINT NOT NULL,
    verify_us BIGINT NOT NULL
);
