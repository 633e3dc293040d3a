-- hourglass serve, schema 7: the queue indexed in the order workers take it.
-- Workers claim the oldest queued submission (ORDER BY received_ms, id). Uploads of one
-- deadline rush share a received_ms by the hundred (the TSA's time has a resolution), and an
-- index without the id made the database sort every one of them, bundle and all, at each claim:
-- with thousands queued, verifying the queue took quadratic time. With the id in the index the
-- first rows of the queue are read in order and nothing is sorted.
DROP INDEX submissions_queue;
CREATE INDEX submissions_queue ON submissions (status, received_ms, id);
