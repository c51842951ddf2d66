package db

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A Routine is one statement of the ledger or of the statement side, run
// inside a SECURITY DEFINER function owned by the schema's owner: no
// clearing_* role may insert into postings, legs, statement lines or
// audit_events itself (migrations/00010), so whatever such a role writes,
// it writes through a routine, and each begins by checking that the run it
// writes for is running and was started by the same login
// (clearing_own_run).
//
// A transaction that calls a routine reaches the tenant's tables through
// routines only, its reads after the first write too: on Citus, a
// transaction that writes a shard as one role (the owner, in a routine)
// may not touch it as another (the calling login), and is refused with
// "cannot perform query on placements that were modified in this
// transaction by a different user". docs/decisions/one-role-per-transaction.md.
//
// The statements stay Go constants in the package that owns their tables,
// composed and reviewed with the code that calls them; `clearing migrate`
// creates or replaces the routines from them (InstallRoutines), and `ledger
// verify` checks that what is installed is what this binary would install
// (CheckRoutines).
type Routine struct {
	Name string
	Args string // the SQL argument types, in the order of $1, $2, ...
	// Returns is the SQL return type. For a set (SETOF or TABLE), Body is
	// one query, whose rows are returned; for void, Body is PL/pgSQL
	// statements; for any other type, Body is PL/pgSQL statements that end
	// in a RETURN.
	Returns string
	Body    string
	// NoRun says the routine is for no run yet (it starts one, or reads
	// before one is started): it checks none, and must read or write
	// nothing its caller could not itself.
	NoRun bool
}

// Call is the statement that runs the routine with the statement's own
// parameters.
func (r Routine) Call() string {
	n := strings.Count(r.Args, ",") + 1
	ps := make([]string, n)
	for i := range ps {
		ps[i] = fmt.Sprintf("$%d", i+1)
	}
	return "SELECT * FROM " + r.Name + "(" + strings.Join(ps, ", ") + ")"
}

// Source is the function body as PostgreSQL keeps it (pg_proc.prosrc). It
// is PL/pgSQL, which prepares each statement when it first runs it, so the
// check of the run comes before anything else, even the reading of a stage
// that is not what the statement expects. Column names win over the names
// of the output columns (verdict, n). Every routine takes the tenant as $1
// and, unless it is for no run, the run as $2, which clearing_own_run checks.
func (r Routine) Source() string {
	stmt := strings.TrimSpace(r.Body)
	if set := strings.HasPrefix(r.Returns, "SETOF ") || strings.HasPrefix(r.Returns, "TABLE "); set {
		stmt = "RETURN QUERY " + stmt
	}
	check := "PERFORM clearing_own_run($1, $2);\n    "
	if r.NoRun {
		check = ""
	}
	return "\n#variable_conflict use_column\nBEGIN\n    " + check + stmt + ";\nEND;\n"
}

// Err says what to do when the routine is missing: the database was
// migrated by an older clearing.
func (r Routine) Err(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == pgerrcode.UndefinedFunction {
		return fmt.Errorf("%s is not installed: run 'clearing migrate': %w", r.Name, err)
	}
	return err
}

// planCacheMode is the setting every routine runs with (InstallRoutines).
const planCacheMode = "plan_cache_mode = force_custom_plan"

// RoutinesDigest identifies a set of routines as InstallRoutines installs
// them, so that a test template built with one set is never reused for
// another.
func RoutinesDigest(rs []Routine) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", planCacheMode)
	for _, r := range rs {
		fmt.Fprintf(h, "%s(%s) %s\x00%s\x00", r.Name, r.Args, r.Returns, r.Source())
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// InstallRoutines creates or replaces every routine of rs in tx, owned by
// the role that runs it (the schema's owner). The search path is fixed to
// the schema, then pg_catalog, then the session's temporary schema, where
// the stage is: a temporary table can never stand in for a ledger table.
//
// Each statement is planned for the values it runs with
// (plan_cache_mode = force_custom_plan). A routine runs once per chunk; after
// five runs PostgreSQL may keep a generic plan, made without the chunk's
// bounds, and in one ingest of 300,000 ISO 8583 messages each chunk took
// longer than the one before (docs/decisions/write-path.md). Planning a
// statement costs milliseconds; running it, a chunk's worth of work.
func InstallRoutines(ctx context.Context, tx pgx.Tx, rs []Routine) error {
	var schema string
	if err := tx.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return fmt.Errorf("db: install routines: %w", err)
	}
	path := pgx.Identifier{schema}.Sanitize() + ", pg_catalog, pg_temp"
	for _, r := range rs {
		sig := r.Name + "(" + r.Args + ")"
		for _, sql := range []string{
			`CREATE OR REPLACE FUNCTION ` + sig + ` RETURNS ` + r.Returns + `
LANGUAGE plpgsql SECURITY DEFINER SET search_path = ` + path + ` SET ` + planCacheMode + `
AS $routine$` + r.Source() + `$routine$`,
			`REVOKE ALL ON FUNCTION ` + sig + ` FROM PUBLIC`,
			`GRANT EXECUTE ON FUNCTION ` + sig + ` TO clearing_ingest`,
		} {
			if _, err := tx.Exec(ctx, sql); err != nil {
				return fmt.Errorf("db: install %s: %w", r.Name, err)
			}
		}
	}
	return nil
}

// RoutineFinding is one way an installed routine differs from this
// binary's.
type RoutineFinding struct {
	Name    string
	Problem string
}

// CheckRoutines compares the installed routines with rs: each must exist
// once, be SECURITY DEFINER, fix its search path and plan cache mode, and
// have the same body. A
// routine replaced by one that writes something else, or dropped, is a
// finding.
func CheckRoutines(ctx context.Context, q interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}, rs []Routine) ([]RoutineFinding, error) {
	var out []RoutineFinding
	for _, r := range rs {
		rows, err := q.Query(ctx, `
SELECT p.prosrc, p.prosecdef,
       coalesce(p.proconfig = ARRAY['search_path=' || quote_ident(current_schema()) || ', pg_catalog, pg_temp',
                                    $2], false)
  FROM pg_proc p WHERE p.proname = $1 AND p.pronamespace = current_schema()::regnamespace`, r.Name,
			strings.ReplaceAll(planCacheMode, " ", ""))
		if err != nil {
			return nil, fmt.Errorf("db: check routines: %w", err)
		}
		type def struct {
			Src     string
			Definer bool
			Path    bool // the search path and plan cache mode InstallRoutines sets
		}
		defs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[def])
		if err != nil {
			return nil, fmt.Errorf("db: check routines: %w", err)
		}
		switch {
		case len(defs) == 0:
			out = append(out, RoutineFinding{r.Name, "routine is missing: run 'clearing migrate'"})
		case len(defs) > 1:
			out = append(out, RoutineFinding{r.Name, fmt.Sprintf("%d functions of this name", len(defs))})
		case defs[0].Src != r.Source():
			out = append(out, RoutineFinding{r.Name, "routine body is not the one this clearing installs ('clearing migrate' installs it)"})
		case !defs[0].Definer || !defs[0].Path:
			out = append(out, RoutineFinding{r.Name, "routine is not SECURITY DEFINER with the settings 'clearing migrate' gives it"})
		}
	}
	return out, nil
}
