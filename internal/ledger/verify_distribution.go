package ledger

import (
	"context"
	"fmt"
)

// checkDistributed is the check that a database on Citus holds the schema
// as `clearing migrate --distribute` left it.
const checkDistributed = "every tenant table is distributed by tenant_id, co-located, with its triggers on every shard"

// distributionQuery finds, on a Citus coordinator, the tables that are not
// held the way migrate --distribute holds them: a table with a tenant_id
// column distributed by it and co-located with postings, any other table
// (but goose's own) a reference table.
const distributionQuery = `
WITH anchor AS (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = to_regclass('postings'))
SELECT c.relname::text, c.relname::text,
       CASE WHEN d.logicalrelid IS NULL THEN 'is not distributed: run clearing migrate --distribute'
            WHEN t.tenant AND d.partmethod <> 'h' THEN 'is not hash-distributed by tenant_id'
            WHEN t.tenant AND column_to_column_name(d.logicalrelid, d.partkey) <> 'tenant_id'
                 THEN format('is distributed by %s, not tenant_id', column_to_column_name(d.logicalrelid, d.partkey))
            WHEN t.tenant THEN 'is not co-located with postings'
            ELSE 'has no tenant_id and is not a reference table' END
  FROM pg_class c
 CROSS JOIN LATERAL (SELECT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id'
                                     AND NOT a.attisdropped) AS tenant) t
  LEFT JOIN pg_dist_partition d ON d.logicalrelid = c.oid
 WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
   AND c.relname <> 'clearing_schema_version'
   AND (d.logicalrelid IS NULL
        OR (t.tenant AND (d.partmethod <> 'h' OR column_to_column_name(d.logicalrelid, d.partkey) <> 'tenant_id'
                          OR d.colocationid IS DISTINCT FROM (SELECT colocationid FROM anchor)))
        OR (NOT t.tenant AND d.partmethod <> 'n'))
 ORDER BY 1`

// shardTriggersQuery finds the shards of the distributed tables that lack
// a trigger of their table, or have one that does not fire (disabled, or
// firing for replication only): on Citus the triggers fire on the shards,
// so a shard without them is a table without its guards.
const shardTriggersQuery = `
WITH tables AS (
    SELECT d.logicalrelid AS rel, (SELECT count(*) FROM pg_trigger g WHERE g.tgrelid = d.logicalrelid AND NOT g.tgisinternal) AS want
      FROM pg_dist_partition d
      JOIN pg_class c ON c.oid = d.logicalrelid
     WHERE c.relnamespace = current_schema()::regnamespace
)
SELECT t.rel::regclass::text, format('shard %s on %s:%s', r.shardid, r.nodename, r.nodeport),
       CASE WHEN NOT r.success THEN 'its triggers cannot be read: ' || r.result
            ELSE format('has %s of its table''s %s triggers enabled', r.result, t.want) END
  FROM tables t
 CROSS JOIN LATERAL run_command_on_placements(t.rel,
       $$SELECT count(*) FROM pg_trigger WHERE tgrelid = '%s'::regclass AND NOT tgisinternal AND tgenabled IN ('O', 'A')$$) r
 WHERE t.want > 0 AND (NOT r.success OR r.result <> t.want::text)
 ORDER BY 1, 2`

// verifyDistribution adds, on a database with the citus extension, the
// check that its tables are distributed as migrate --distribute does it,
// and that every shard has its table's triggers. On one PostgreSQL it adds
// nothing.
func verifyDistribution(ctx context.Context, q Querier, v *Verification) error {
	var citus bool
	if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')`).Scan(&citus); err != nil {
		return fmt.Errorf("ledger: verify distribution: %w", err)
	}
	if !citus {
		return nil
	}
	c := Check{Name: checkDistributed}
	if err := collect(ctx, q, &c, distributionQuery); err != nil {
		return err
	}
	if err := collect(ctx, q, &c, shardTriggersQuery); err != nil {
		return err
	}
	v.add(c)
	return nil
}
