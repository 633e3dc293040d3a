-- hourglass serve, schema 6: what an upload costs the disk.
-- `discarded_digest`: a document that does not match its bundle's digest (its verdict is
-- invalid whatever it holds) is not stored; the digest the set's verifier made of it is, in
-- hex, so that the verdict is still the library's. NULL when the document is stored.
-- `stored_bytes`: the bytes the submission holds (its bundle, and its document when stored),
-- summed by /metrics through the index.
ALTER TABLE submissions ADD COLUMN discarded_digest TEXT;
ALTER TABLE submissions ADD COLUMN stored_bytes BIGINT NOT NULL DEFAULT 0;
UPDATE submissions SET stored_bytes = document_bytes + LENGTH(bundle);
CREATE INDEX submissions_stored_bytes ON submissions (stored_bytes);
