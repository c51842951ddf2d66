package schema

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrNoCitus means that a database asked to distribute its tables has no
// citus extension.
var ErrNoCitus = errors.New("the database has no citus extension")

// DistributionColumn is the column every tenant table is distributed by.
const DistributionColumn = "tenant_id"

// anchorTable is the distributed table every other tenant table is
// co-located with: a tenant's rows of every table live on the same node,
// so each statement of a command for one tenant runs on that node alone.
const anchorTable = "postings"

// versionTable is goose's bookkeeping (package db), which stays on the
// coordinator: only migrate reads it.
const versionTable = "clearing_schema_version"

// Distributed is one table as Distribute left it.
type Distributed struct {
	Table string
	// How is "distributed by tenant_id" or "reference".
	How string
	// Changed says that this call distributed it; false means it was
	// already.
	Changed bool
}

// Distribute spreads the schema over a Citus cluster: every table with a
// tenant_id column is distributed by it, co-located with postings, and
// every other table (the currency exponents) becomes a reference table,
// copied to every node. Tables already distributed are left as they are, so
// running it again changes nothing; a tenant table distributed otherwise
// (by another column, or not co-located) is an error, since moving it is
// an operator's decision. The schema's functions are created on every
// worker, where the triggers and the statements on the shards call them. shards is the shard count of a new co-location
// group, 0 for Citus's citus.shard_count.
//
// Triggers on distributed tables need citus.enable_unsafe_triggers: the
// ledger's append-only, balance and seal triggers read only the rows of
// the statement that fired them and their own tenant, which is what makes
// them safe to run on the shards. The setting is made for the database, so
// that later migrations, which create triggers too, have it.
//
// The database must have the citus extension, with its workers registered
// (citus_add_node); without it Distribute returns ErrNoCitus.
func Distribute(ctx context.Context, pool *pgxpool.Pool, shards int) ([]Distributed, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("schema: distribute: %w", err)
	}
	defer conn.Release()
	if ok, err := HasCitus(ctx, conn); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("schema: %w: install Citus on the coordinator and every worker, run CREATE EXTENSION citus in this database on each, "+
			"register the workers with citus_add_node, then migrate --distribute again; or migrate without --distribute for one PostgreSQL", ErrNoCitus)
	}
	if _, err := conn.Exec(ctx, `SET citus.enable_unsafe_triggers = on`); err != nil {
		return nil, fmt.Errorf("schema: distribute: %w", err)
	}
	var alter string
	if err := conn.QueryRow(ctx, `SELECT format('ALTER DATABASE %I SET citus.enable_unsafe_triggers = on', current_database())`).Scan(&alter); err != nil {
		return nil, fmt.Errorf("schema: distribute: %w", err)
	}
	if _, err := conn.Exec(ctx, alter); err != nil {
		return nil, fmt.Errorf("schema: distribute: %s: %w", alter, err)
	}
	tables, err := layout(ctx, conn.Conn())
	if err != nil {
		return nil, err
	}
	var out []Distributed
	for _, t := range tables {
		d := Distributed{Table: t.Name, How: "reference"}
		if t.Tenant {
			d.How = "distributed by " + DistributionColumn
		}
		switch {
		case t.Tenant && t.Method == "h" && t.Column == DistributionColumn && (t.Name == anchorTable || t.Colocated):
		case !t.Tenant && t.Method == "n":
		case t.Method != "":
			return out, fmt.Errorf("schema: distribute: %s is already distributed otherwise (%s); undistribute_table it first", t.Name, t.describe())
		case t.Tenant && t.Name == anchorTable:
			args := []any{t.Name, DistributionColumn}
			sql := `SELECT create_distributed_table($1, $2)`
			if shards > 0 {
				sql, args = `SELECT create_distributed_table($1, $2, shard_count => $3)`, append(args, shards)
			}
			if _, err := conn.Exec(ctx, sql, args...); err != nil {
				return out, fmt.Errorf("schema: distribute %s: %w", t.Name, err)
			}
			d.Changed = true
		case t.Tenant:
			if _, err := conn.Exec(ctx, `SELECT create_distributed_table($1, $2, colocate_with => $3)`, t.Name, DistributionColumn, anchorTable); err != nil {
				return out, fmt.Errorf("schema: distribute %s: %w", t.Name, err)
			}
			d.Changed = true
		default:
			if _, err := conn.Exec(ctx, `SELECT create_reference_table($1)`, t.Name); err != nil {
				return out, fmt.Errorf("schema: make %s a reference table: %w", t.Name, err)
			}
			d.Changed = true
		}
		out = append(out, d)
	}
	// The triggers and the statements Citus sends to the shards call the
	// schema's functions on the workers: each is created there, and Citus
	// then propagates a later CREATE OR REPLACE of it.
	rows, err := conn.Query(ctx, `
SELECT p.oid::regprocedure::text FROM pg_proc p
 WHERE p.pronamespace = current_schema()::regnamespace
   AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
   AND NOT EXISTS (SELECT 1 FROM pg_dist_object o WHERE o.classid = 'pg_proc'::regclass AND o.objid = p.oid)
 ORDER BY 1`)
	if err != nil {
		return out, fmt.Errorf("schema: distribute functions: %w", err)
	}
	fns, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return out, fmt.Errorf("schema: distribute functions: %w", err)
	}
	for _, f := range fns {
		if _, err := conn.Exec(ctx, `SELECT create_distributed_function($1)`, f); err != nil {
			return out, fmt.Errorf("schema: distribute function %s: %w", f, err)
		}
	}
	return out, nil
}

// HasCitus reports whether the database has the citus extension.
func HasCitus(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (bool, error) {
	var ok bool
	if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')`).Scan(&ok); err != nil {
		return false, fmt.Errorf("schema: %w", err)
	}
	return ok, nil
}

// IsDistributed reports whether the schema has been distributed: the
// database has Citus and postings is a distributed table.
func IsDistributed(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}) (bool, error) {
	ok, err := HasCitus(ctx, q)
	if err != nil || !ok {
		return false, err
	}
	if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_dist_partition WHERE logicalrelid = to_regclass($1))`, anchorTable).Scan(&ok); err != nil {
		return false, fmt.Errorf("schema: %w", err)
	}
	return ok, nil
}

// table is one table of the schema with its place in the cluster.
type table struct {
	Name      string
	Tenant    bool   // it has a tenant_id column
	Method    string // pg_dist_partition.partmethod: h (hash), n (reference), "" (local)
	Column    string // the distribution column, if any
	Colocated bool   // in postings' co-location group
}

func (t table) describe() string {
	if t.Method == "n" {
		return "a reference table"
	}
	s := fmt.Sprintf("method %s by %q", t.Method, t.Column)
	if !t.Colocated {
		s += ", not co-located with " + anchorTable
	}
	return s
}

// layout lists the schema's tables, postings first, with how Citus holds
// each. goose's own table is left out.
func layout(ctx context.Context, conn *pgx.Conn) ([]table, error) {
	rows, err := conn.Query(ctx, `
SELECT c.relname::text,
       EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = $1 AND NOT a.attisdropped),
       coalesce(d.partmethod::text, ''),
       coalesce(CASE WHEN d.partmethod = 'h' THEN column_to_column_name(d.logicalrelid, d.partkey) END, ''),
       coalesce(d.colocationid = (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = to_regclass($2)), false)
  FROM pg_class c
  LEFT JOIN pg_dist_partition d ON d.logicalrelid = c.oid
 WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') AND NOT c.relispartition
   AND c.relname <> $3
 ORDER BY c.relname <> $2, c.relname`, DistributionColumn, anchorTable, versionTable)
	if err != nil {
		return nil, fmt.Errorf("schema: distribution: %w", err)
	}
	ts, err := pgx.CollectRows(rows, pgx.RowToStructByPos[table])
	if err != nil {
		return nil, fmt.Errorf("schema: distribution: %w", err)
	}
	return ts, nil
}
