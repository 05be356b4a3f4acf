-- Tables for examples/cluster/retention.yaml, each with a backlog of expired rows:
--   psql -h 127.0.0.1 -U postgres -d retention -f examples/cluster/setup.sql
CREATE TABLE IF NOT EXISTS cluster_events (id bigserial PRIMARY KEY, created_at timestamptz NOT NULL);
CREATE INDEX IF NOT EXISTS cluster_events_created_at ON cluster_events (created_at, id);
CREATE TABLE IF NOT EXISTS cluster_sessions (id bigserial PRIMARY KEY, last_seen timestamptz NOT NULL);
CREATE INDEX IF NOT EXISTS cluster_sessions_last_seen ON cluster_sessions (last_seen, id);
CREATE TABLE IF NOT EXISTS cluster_audit (id bigserial PRIMARY KEY, at timestamptz NOT NULL);
CREATE INDEX IF NOT EXISTS cluster_audit_at ON cluster_audit (at, id);
INSERT INTO cluster_events (created_at) SELECT now() - interval '30 days' - g * interval '1 second' FROM generate_series(1, 200000) g;
INSERT INTO cluster_events (created_at) SELECT now() - g * interval '1 minute' FROM generate_series(1, 1000) g;
INSERT INTO cluster_sessions (last_seen) SELECT now() - interval '2 days' - g * interval '1 second' FROM generate_series(1, 50000) g;
INSERT INTO cluster_audit (at) SELECT now() - interval '60 days' - g * interval '1 second' FROM generate_series(1, 20000) g;
