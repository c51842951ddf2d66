-- A file with many held records took longer per chunk the further it got
-- (1,000,000 ISO 8583 messages, about 10,000 of them held: 0.6 s for a
-- chunk at the start, 3.8 s at the end). Two lookups of each chunk entered
-- an index by the tenant alone, for a tenant the statistics did not know:
--
--   - holding the chunk's records that need a person
--     (clearing_hold_quarantined) reads their audit events, the run's in
--     the chunk's record numbers, and walked the tenant's audit events;
--   - closing the held records that posted after all
--     (clearing_close_posted) probes the quarantine per staged record by
--     key and digest, and walked the tenant's held records for each.
--
-- The first gets an index of its own, on the events that need attention
-- only (a few of a file's, so a duplicate's audit row costs nothing more).
-- The second is what migration 00021 did for postings and statement lines:
-- no statistics on the tenant of the audit events, the quarantine and its
-- decisions, so that every tenant is estimated at the planner's default
-- share and a lookup by key enters the primary key by key
-- (docs/decisions/tenant-unknown-to-the-planner.md).

-- +goose Up
CREATE INDEX audit_events_attention ON audit_events (tenant_id, run_id, record_no) WHERE needs_attention;

-- +goose StatementBegin
DO $$
DECLARE
    t text;
    distributed boolean := false;
BEGIN
    IF to_regclass('pg_dist_partition') IS NOT NULL THEN
        EXECUTE $q$SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'postings'::regclass)$q$ INTO distributed;
    END IF;
    FOREACH t IN ARRAY ARRAY['audit_events', 'quarantine', 'quarantine_decisions'] LOOP
        IF distributed THEN
            PERFORM set_config('citus.enable_ddl_propagation', 'off', true);
            EXECUTE format('ALTER TABLE %I ALTER COLUMN tenant_id SET STATISTICS 0', t);
            PERFORM run_command_on_placements(t::regclass, 'ALTER TABLE %s ALTER COLUMN tenant_id SET STATISTICS 0');
        ELSE
            EXECUTE format('ALTER TABLE %I ALTER COLUMN tenant_id SET STATISTICS 0', t);
        END IF;
    END LOOP;
END
$$;
-- +goose StatementEnd

-- +goose Down
ALTER TABLE quarantine_decisions ALTER COLUMN tenant_id SET STATISTICS -1;
ALTER TABLE quarantine ALTER COLUMN tenant_id SET STATISTICS -1;
ALTER TABLE audit_events ALTER COLUMN tenant_id SET STATISTICS -1;
DROP INDEX audit_events_attention;
