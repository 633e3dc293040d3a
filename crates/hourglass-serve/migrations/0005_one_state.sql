-- hourglass serve, schema 5: a submission's facts are stored once (the service's `submission`
-- module reads its state from them). The schema-1 columns nothing reads any more are dropped:
-- `links_json` (the verdict's JSON holds the links since schema 2) and `document_digest` (the
-- workers hash the stored document). A verdict's credit and reason are in its JSON: the copies
-- beside it are cleared, and `credited_ms` and `reason` now hold only what rows verified before
-- schema 2 kept of their verdict, and a failed submission's reason.
ALTER TABLE submissions DROP COLUMN links_json;
ALTER TABLE submissions DROP COLUMN document_digest;
UPDATE submissions SET credited_ms = NULL, reason = NULL WHERE verdict IS NOT NULL;
