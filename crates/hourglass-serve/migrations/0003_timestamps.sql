-- hourglass serve, schema 3: RFC 3161. Each submission keeps the token of the service's TSA
-- over its bundle (DER; its genTime is the submission's received time), and every server start
-- takes a TSA instance number, the high half of the serial numbers it issues, so that serial
-- numbers are unique across the servers of one database.
ALTER TABLE submissions ADD COLUMN timestamp_token BYTEA;
CREATE TABLE tsa_instances (
    id BIGINT PRIMARY KEY,
    server TEXT NOT NULL,
    started_ms BIGINT NOT NULL
);
