-- Closing the held records that posted after all (clearing_close_posted)
-- probes the quarantine per staged record by key and digest. For a tenant
-- the statistics did not know, the planner entered the quarantine by the
-- tenant alone and walked its held records once per staged record. As
-- migration 00021 did for postings and statement lines: no statistics on
-- the tenant of the audit events, the quarantine and its decisions, so that
-- every tenant is estimated at the planner's default share and a lookup by
-- key enters the primary key by key
-- (docs/decisions/tenant-unknown-to-the-planner.md). A migration of its own:
-- on Citus, the statement reaches the shards over connections of their own,
-- which would wait for the shard locks an index built in the same
-- transaction holds.

-- +goose Up
-- +goose StatementBegin
DO $$
DECLARE
    t text;
    distributed boolean := false;
BEGIN
    IF to_regclass('pg_dist_partition') IS NOT NULL THEN
        EXECUTE $q$SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = 'postings'::regclass)$q$ INTO distributed;
    END IF;
    IF distributed THEN
        PERFORM set_config('citus.enable_ddl_propagation', 'off', true);
    END IF;
    FOREACH t IN ARRAY ARRAY['audit_events', 'quarantine', 'quarantine_decisions'] LOOP
        EXECUTE format('ALTER TABLE %I ALTER COLUMN tenant_id SET STATISTICS 0', t);
        IF distributed THEN
            PERFORM run_command_on_placements(t::regclass, 'ALTER TABLE %s ALTER COLUMN tenant_id SET STATISTICS 0');
        END IF;
    END LOOP;
END
$$;
-- +goose StatementEnd

-- +goose Down
ALTER TABLE quarantine_decisions ALTER COLUMN tenant_id SET STATISTICS -1;
ALTER TABLE quarantine ALTER COLUMN tenant_id SET STATISTICS -1;
ALTER TABLE audit_events ALTER COLUMN tenant_id SET STATISTICS -1;
