package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clearing-dev/clearing/internal/db"
)

// The ledger's write statements run inside SECURITY DEFINER functions, the
// routines, owned by the schema's owner: no clearing_* role may insert into
// postings, legs or audit_events itself (migrations/00010), so whatever
// such a role writes, it writes through one of these, and each begins by
// checking that the run it writes for is running and was started by the
// same login (clearing_own_run). A routine writes postings of the kinds its
// statement names and legs only for the postings it has just inserted:
// neither a posting of kind correction nor a leg added to an existing
// posting can be written this way.
//
// The statements stay Go constants, composed and reviewed with the code
// that calls them; `clearing migrate` creates or replaces the routines from
// them (InstallRoutines), and `ledger verify` checks that what is installed
// is what this binary would install (checkRoutines).
type routine struct {
	name    string
	args    string // the SQL argument types, in the order of $1, $2, ...
	returns string
	body    string
}

// call is the statement that runs the routine with the statement's own
// parameters.
func (r routine) call() string {
	n := strings.Count(r.args, ",") + 1
	ps := make([]string, n)
	for i := range ps {
		ps[i] = fmt.Sprintf("$%d", i+1)
	}
	return "SELECT * FROM " + r.name + "(" + strings.Join(ps, ", ") + ")"
}

// source is the function body as PostgreSQL keeps it (pg_proc.prosrc). It
// is PL/pgSQL, which prepares each statement when it first runs it, so the
// check of the run comes before anything else, even the reading of a stage
// that is not what the statement expects. Column names win over the names
// of the output columns (verdict, n).
func (r routine) source() string {
	stmt := "RETURN QUERY " + strings.TrimSpace(r.body) + ";"
	if r.returns == "void" {
		stmt = strings.TrimSpace(r.body) + ";"
	}
	return "\n#variable_conflict use_column\nBEGIN\n    PERFORM clearing_own_run($1, $2);\n    " + stmt + "\nEND;\n"
}

// Every routine takes the tenant as $1 and the run as $2, which
// clearing_own_run checks; the statements were written with that order.
var (
	postClearing = routine{"clearing_post_clearing", "text, bigint, bigint, bigint, text", "SETOF bigint", insertClearing}
	postLinked   = routine{"clearing_post_linked", "text, bigint, bigint, bigint, text, integer", "SETOF bigint", insertLinked}
	postReclass  = routine{"clearing_post_reclass", "text, bigint, bigint, bigint, text", "void", insertReclass}
	auditStaged  = routine{"clearing_audit_postings", "text, bigint, bigint, bigint", "TABLE (verdict text, n bigint)", auditPostings}
	auditNotice  = routine{"clearing_audit_notices", "text, bigint, bigint, bigint", "TABLE (verdict text, n bigint)", auditNotices}
	auditLines   = routine{"clearing_audit_lines", "text, bigint, text, boolean", "TABLE (verdict text, n bigint)", auditStatementLines}
)

var routines = []routine{postClearing, postLinked, postReclass, auditStaged, auditNotice, auditLines}

// RoutinesDigest identifies the routines this binary installs, so that a
// test template built with one set is never reused for another.
func RoutinesDigest() string {
	h := sha256.New()
	for _, r := range routines {
		fmt.Fprintf(h, "%s(%s) %s\x00%s\x00", r.name, r.args, r.returns, r.source())
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// Migrate applies the schema's migrations and installs the routines: what
// `clearing migrate` does.
func Migrate(ctx context.Context, pool *pgxpool.Pool, log *slog.Logger) ([]db.Migration, error) {
	ms, err := db.Migrate(ctx, pool, log)
	if err != nil {
		return ms, err
	}
	return ms, pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error { return InstallRoutines(ctx, tx) })
}

// InstallRoutines creates or replaces every routine in tx, owned by the
// role that runs it (the schema's owner). The search path is fixed to the
// schema, then pg_catalog, then the session's temporary schema, where the
// stage is: a temporary table can never stand in for a ledger table.
func InstallRoutines(ctx context.Context, tx pgx.Tx) error {
	var schema string
	if err := tx.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return fmt.Errorf("ledger: install routines: %w", err)
	}
	path := pgx.Identifier{schema}.Sanitize() + ", pg_catalog, pg_temp"
	for _, r := range routines {
		sig := r.name + "(" + r.args + ")"
		for _, sql := range []string{
			`CREATE OR REPLACE FUNCTION ` + sig + ` RETURNS ` + r.returns + `
LANGUAGE plpgsql SECURITY DEFINER SET search_path = ` + path + `
AS $routine$` + r.source() + `$routine$`,
			`REVOKE ALL ON FUNCTION ` + sig + ` FROM PUBLIC`,
			`GRANT EXECUTE ON FUNCTION ` + sig + ` TO clearing_ingest`,
		} {
			if _, err := tx.Exec(ctx, sql); err != nil {
				return fmt.Errorf("ledger: install %s: %w", r.name, err)
			}
		}
	}
	return nil
}

// checkRoutines compares the installed routines with this binary's: each
// must exist once, be SECURITY DEFINER, fix its search path and have the
// same body. A routine replaced by one that writes something else, or
// dropped, is a finding.
func checkRoutines(ctx context.Context, q Querier) (Check, error) {
	c := Check{Name: "the ledger's routines are the ones this clearing installs"}
	for _, r := range routines {
		rows, err := q.Query(ctx, `
SELECT p.prosrc, p.prosecdef,
       coalesce(p.proconfig = ARRAY['search_path=' || quote_ident(current_schema()) || ', pg_catalog, pg_temp'], false)
  FROM pg_proc p WHERE p.proname = $1 AND p.pronamespace = current_schema()::regnamespace`, r.name)
		if err != nil {
			return c, fmt.Errorf("ledger: verify routines: %w", err)
		}
		type def struct {
			Src     string
			Definer bool
			Path    bool // the search path InstallRoutines sets
		}
		defs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[def])
		if err != nil {
			return c, fmt.Errorf("ledger: verify routines: %w", err)
		}
		switch {
		case len(defs) == 0:
			c.found("", r.name, "routine is missing: run 'clearing migrate'")
		case len(defs) > 1:
			c.found("", r.name, fmt.Sprintf("%d functions of this name", len(defs)))
		case defs[0].Src != r.source():
			c.found("", r.name, "routine body is not the one this clearing installs ('clearing migrate' installs it)")
		case !defs[0].Definer || !defs[0].Path:
			c.found("", r.name, "routine is not SECURITY DEFINER with the search path 'clearing migrate' gives it")
		}
	}
	return c, nil
}

// routineErr says what to do when a routine is missing: the database was
// migrated by an older clearing.
func routineErr(r routine, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == pgerrcode.UndefinedFunction {
		return fmt.Errorf("ledger: %s is not installed: run 'clearing migrate': %w", r.name, err)
	}
	return err
}
