-- hourglass serve, schema 2. The verdict is stored as hourglass-timelock's own type (its JSON,
-- written and read by the library, never by key name), and a job that fails is retried a
-- bounded number of times before its final `error` state.
ALTER TABLE submissions ADD COLUMN verdict TEXT;
ALTER TABLE submissions ADD COLUMN tries BIGINT NOT NULL DEFAULT 0;
