-- No statistics on the tenant of postings and statement lines, so that a
-- tenant the statistics do not know yet is estimated like any other.
--
-- With statistics, a tenant absent when the table was last analysed (a new
-- tenant, or one whose first large file autovacuum has not caught up with)
-- is estimated at about one row. An index that begins with tenant_id (the
-- primary key) then looks as cheap for "this tenant and this reference" as
-- the index on the reference, and a lookup per record walked the tenant's
-- postings once per record. Without statistics every tenant is estimated
-- at the planner's default share of the table, and the lookup by reference,
-- id or refers_to enters the index of that column. Every query compares the
-- tenant with a plain tenant_id = $1, which a distributed planner (Citus)
-- routes to one shard (docs/decisions/tenant-unknown-to-the-planner.md).

-- +goose Up
-- On a schema already distributed over Citus, which does not propagate an
-- ALTER of the distribution column, the setting is made on the table and
-- on each of its shards; shards created later copy the table's.
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
        FOREACH t IN ARRAY ARRAY['postings', 'statement_lines'] LOOP
            EXECUTE format('ALTER TABLE %I ALTER COLUMN tenant_id SET STATISTICS 0', t);
            PERFORM run_command_on_placements(t::regclass, 'ALTER TABLE %s ALTER COLUMN tenant_id SET STATISTICS 0');
        END LOOP;
    ELSE
        ALTER TABLE postings ALTER COLUMN tenant_id SET STATISTICS 0;
        ALTER TABLE statement_lines ALTER COLUMN tenant_id SET STATISTICS 0;
    END IF;
END
$$;
-- +goose StatementEnd
-- Statistics ANALYZE collected before stay in pg_statistic until an
-- administrator deletes them; a database migrated before it held data has
-- none.

-- +goose Down
ALTER TABLE statement_lines ALTER COLUMN tenant_id SET STATISTICS -1;
ALTER TABLE postings ALTER COLUMN tenant_id SET STATISTICS -1;
