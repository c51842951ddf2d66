-- A file with many held records took longer per chunk the further it got
-- (1,000,000 ISO 8583 messages, about 10,000 of them held). Holding the
-- chunk's records that need a person (clearing_hold_quarantined) reads
-- their audit events, the run's in the chunk's record numbers, and no index
-- served that: each chunk walked the tenant's audit events. The events that
-- need attention get an index of their own; they are a few of a file's, so
-- a duplicate's audit row costs nothing more. (Migration 00027 does the
-- rest.)

-- +goose Up
CREATE INDEX audit_events_attention ON audit_events (tenant_id, run_id, record_no) WHERE needs_attention;

-- +goose Down
DROP INDEX audit_events_attention;
