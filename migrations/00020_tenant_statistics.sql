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
ALTER TABLE postings ALTER COLUMN tenant_id SET STATISTICS 0;
ALTER TABLE statement_lines ALTER COLUMN tenant_id SET STATISTICS 0;
-- Statistics ANALYZE collected before stay in pg_statistic until an
-- administrator deletes them; a database migrated before it held data has
-- none.

-- +goose Down
ALTER TABLE statement_lines ALTER COLUMN tenant_id SET STATISTICS -1;
ALTER TABLE postings ALTER COLUMN tenant_id SET STATISTICS -1;
