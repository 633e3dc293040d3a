-- hourglass serve, schema 4: every receipt in a transparency log (docs/FORMATS.md section 19).
-- A receipt signed by a worker waits in log_pending (written in the transaction that records
-- the verdict); the sequencer moves it into log_entries under the next index and stores the
-- tree's new hashes in the same transaction; a checkpoint of the tree, signed by the log key and
-- cosigned by the witnesses, is then published, and only then is the receipt (with its
-- inclusion proof and that checkpoint) written to submissions.receipt.

-- Signed receipts not yet in the log, in the order they were signed.
CREATE TABLE log_pending (
    submission_id TEXT PRIMARY KEY REFERENCES submissions (id),
    entry BYTEA NOT NULL,
    signed_ms BIGINT NOT NULL
);
CREATE INDEX log_pending_order ON log_pending (signed_ms, submission_id);

-- The log's one row: its origin and key, how many entries it holds (next_index), how many of
-- them the stored hashes cover (tree_size), the size of the newest published checkpoint, and
-- how many entries have their receipts written (receipts_size). Sequencing updates this row
-- first, so that it is the lock that orders the servers of one database.
CREATE TABLE log_state (
    id BIGINT PRIMARY KEY,
    origin TEXT NOT NULL,
    verifier_key TEXT NOT NULL,
    next_index BIGINT NOT NULL,
    tree_size BIGINT NOT NULL,
    published_size BIGINT NOT NULL,
    receipts_size BIGINT NOT NULL
);

-- The entries: the signed receipts as the log serves them (compact JSON), by index.
CREATE TABLE log_entries (
    idx BIGINT PRIMARY KEY,
    submission_id TEXT NOT NULL UNIQUE REFERENCES submissions (id),
    entry BYTEA NOT NULL
);

-- The tree's stored hashes (RFC 6962): the leaf hashes (level 0) and the root of every complete
-- subtree, by level and index within the level.
CREATE TABLE log_hashes (
    level INTEGER NOT NULL,
    n BIGINT NOT NULL,
    hash BYTEA NOT NULL,
    PRIMARY KEY (level, n)
);

-- Every published checkpoint (signed note, with the witnesses' cosignatures).
CREATE TABLE log_checkpoints (
    size BIGINT PRIMARY KEY,
    note TEXT NOT NULL,
    published_ms BIGINT NOT NULL
);

-- The size of the checkpoint each witness last cosigned, as far as this log knows.
CREATE TABLE log_witnesses (
    name TEXT PRIMARY KEY,
    size BIGINT NOT NULL
);
