// Package runs keeps the history of ingests and statement imports: one row
// per file, its counts, and how far it got. It is the only writer of the
// runs table, and package ingest its only caller that writes. A run is owned by the process
// holding its PostgreSQL advisory lock; a run left "running" with nobody
// holding the lock was interrupted, and the next ingest of the same bytes
// resumes it where its last committed chunk ended.
package runs

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/clearing-dev/clearing/internal/db"
)

// ErrNotFound means no run has the id asked for.
var ErrNotFound = errors.New("runs: not found")

// ErrBusy means a running run of the same file stayed owned by another live
// session for as long as Claim waited.
var ErrBusy = errors.New("runs: the same file is being applied by another session")

// lockClass namespaces the advisory locks that mark a run's owner;
// claimClass those that make finding and starting a run of one file a
// single step (claimOnce).
const (
	lockClass  = 7411
	claimClass = 7412
)

// Statuses as stored, plus Interrupted, which is derived.
const (
	Running     = "running"
	Done        = "done"
	Rejected    = "rejected"    // the file was refused whole; nothing else was written
	Interrupted = "interrupted" // running, but no live process owns it
)

// Run is one file's ingest or import.
type Run struct {
	ID         int64      `json:"run_id"`
	Kind       string     `json:"kind"`
	Format     string     `json:"format"`
	Source     string     `json:"source"`
	FileName   string     `json:"file"`
	FileBytes  int64      `json:"file_bytes"`
	FileSHA256 []byte     `json:"-"`
	Status     string     `json:"status"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	Progress   int64      `json:"progress"`
	Records    int64      `json:"records"`
	Counts
	// Errors say why a rejected run's file was refused, naming lines or
	// offsets where the reader gave them; empty for any other run.
	Errors []string `json:"errors"`
	// Warnings say what the file breaks that no key, amount or date
	// depends on: it was read all the same.
	Warnings []string `json:"warnings"`
}

// Counts tally what a run did with its records; every record read lands in
// exactly one of them. They are defined here, next to the only SQL that
// writes them, and their JSON names are part of the command line's
// contract. A statement import counts the lines it added as Posted.
type Counts struct {
	Posted      int64 `json:"posted"`
	Duplicates  int64 `json:"duplicates"`
	Conflicts   int64 `json:"conflicts"`
	Quarantined int64 `json:"quarantined"`
	Notices     int64 `json:"notices"`
	// Skipped counts records that are no entry of the ledger or the
	// statement: control records, summaries, zero amounts.
	Skipped int64 `json:"skipped"`
	// Settled counts records that arrived after a correction had already
	// posted their money (a missing_in_ledger correction): they post at most
	// a reclassification, never the money again.
	Settled int64 `json:"settled"`
	// AlreadyQuarantined counts records that an earlier run holds in
	// quarantine, unchanged and still open: they need a person, as they
	// did then. Dismissed counts those an operator has since dismissed.
	AlreadyQuarantined int64 `json:"already_quarantined"`
	Dismissed          int64 `json:"dismissed"`
	// Released counts held records of earlier runs that this run posted,
	// their original having arrived; they are no records of this run's
	// file, so Total leaves them out.
	Released int64 `json:"released"`
}

// Add accumulates o into c.
func (c *Counts) Add(o Counts) {
	c.Posted += o.Posted
	c.Duplicates += o.Duplicates
	c.Conflicts += o.Conflicts
	c.Quarantined += o.Quarantined
	c.Notices += o.Notices
	c.Skipped += o.Skipped
	c.Settled += o.Settled
	c.AlreadyQuarantined += o.AlreadyQuarantined
	c.Dismissed += o.Dismissed
	c.Released += o.Released
}

// Total is the number of records the counts account for.
func (c Counts) Total() int64 {
	return c.Posted + c.Duplicates + c.Conflicts + c.Quarantined + c.Notices + c.Skipped + c.Settled +
		c.AlreadyQuarantined + c.Dismissed
}

// Querier is satisfied by *pgx.Conn, pgx.Tx and *pgxpool.Pool.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Claim makes conn the owner of a run for r's file. It resumes the oldest
// interrupted run of the same tenant, kind, format, source and file bytes
// when there is one, and otherwise inserts a new run. Either way conn holds
// the run's advisory lock until Release or until the connection ends, so no
// other process can resume a run that is still alive. Finding a run and
// starting one are a single step under a lock of the file's own, so
// processes that claim one file at once start one run between them.
//
// A run of the same file whose lock another session holds is waited for, up
// to DefaultClaimWait (see ClaimWith): a process killed a moment ago keeps
// its server session, and with it the lock, until the server notices, and a
// new run started then would repeat the dead run's records instead of
// resuming them.
func Claim(ctx context.Context, conn *pgx.Conn, tenant string, r Run) (Run, bool, error) {
	return ClaimWith(ctx, conn, tenant, r, ClaimOptions{})
}

// DefaultClaimWait bounds how long Claim waits for another session's run of
// the same file. clearing's sessions ask the server to notice a dead client
// within a second (client_connection_check_interval), so a lock held for
// longer than this belongs to a live process.
const DefaultClaimWait = time.Minute

// ClaimOptions say how Claim waits for a run of the same file that another
// session owns.
type ClaimOptions struct {
	Wait time.Duration // at most this long; DefaultClaimWait when zero
	Poll time.Duration // between attempts to take the lock; 100ms when zero
	Log  *slog.Logger  // told once that Claim waits; nothing when nil
}

// ClaimWith is Claim with its wait spelled out. When the wait ends with the
// run still owned, it returns an error wrapping ErrBusy and claims nothing.
func ClaimWith(ctx context.Context, conn *pgx.Conn, tenant string, r Run, o ClaimOptions) (Run, bool, error) {
	if o.Wait <= 0 {
		o.Wait = DefaultClaimWait
	}
	if o.Poll <= 0 {
		o.Poll = 100 * time.Millisecond
	}
	deadline := time.Now().Add(o.Wait)
	logged := false
	for {
		got, resumed, held, err := claimOnce(ctx, conn, tenant, r)
		if err != nil || got.ID != 0 {
			return got, resumed, err
		}
		if !time.Now().Before(deadline) {
			return Run{}, false, fmt.Errorf("%w: run %d of the same file is still owned by server process %d after %v: another clearing is applying it (or the server has not yet noticed that its client died); run the command again once it has ended",
				ErrBusy, held, lockHolder(ctx, conn, held), o.Wait)
		}
		if !logged && o.Log != nil {
			o.Log.Info("waiting for the session that owns a run of the same file", slog.Int64("run_id", held),
				slog.Int64("server_pid", lockHolder(ctx, conn, held)), slog.Duration("at_most", o.Wait))
			logged = true
		}
		select {
		case <-ctx.Done():
			return Run{}, false, fmt.Errorf("runs: waiting for run %d: %w", held, ctx.Err())
		case <-time.After(o.Poll):
		}
	}
}

// claimOnce resumes or starts a run of r's file under the file's claim
// lock, so that two processes that start on one file at the same moment
// cannot both find no run and both start one (they would then share the
// file's records between them, each posting some). When another session
// owns a running run of the file, it returns that run's id as held and
// claims nothing.
func claimOnce(ctx context.Context, conn *pgx.Conn, tenant string, r Run) (got Run, resumed bool, held int64, err error) {
	key := claimKey(tenant, r)
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1, $2::int)`, claimClass, key); err != nil {
		return Run{}, false, 0, fmt.Errorf("runs: lock the file's claim: %w", err)
	}
	defer func() {
		if _, uerr := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1, $2::int)`, claimClass, key); uerr != nil && err == nil {
			got, err = Run{}, fmt.Errorf("runs: unlock the file's claim: %w", uerr)
		}
	}()
	got, held, err = resume(ctx, conn, tenant, r)
	if err != nil || got.ID != 0 || held != 0 {
		return got, got.ID != 0, held, err
	}
	var id int64
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if err := Insert(ctx, tx, tenant, &r); err != nil {
			return err
		}
		id = r.ID
		// The lock is taken before the row becomes visible to anyone else.
		_, err := tx.Exec(ctx, `SELECT pg_advisory_lock($1, $2::int)`, lockClass, lockID(id))
		return err
	})
	if err != nil {
		return Run{}, false, 0, fmt.Errorf("runs: start run: %w", err)
	}
	got, err = Get(ctx, conn, tenant, id)
	return got, false, 0, err
}

// claimKey maps a file's identity as resume matches it onto the 32-bit
// advisory lock key space; two files that share a key only wait for each
// other's claim, never for each other's run.
func claimKey(tenant string, r Run) int32 {
	h := fnv.New32a()
	for _, s := range []string{tenant, r.Kind, r.Format, r.Source} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	h.Write(r.FileSHA256)
	return int32(h.Sum32())
}

// resume takes over the oldest running run of r's file whose lock nobody
// holds, and returns it. When it finds none, held is the oldest such run
// whose lock another session holds, or 0 when there is none either.
func resume(ctx context.Context, conn *pgx.Conn, tenant string, r Run) (got Run, held int64, err error) {
	rows, err := conn.Query(ctx, `
SELECT id FROM runs
 WHERE tenant_id = $1 AND status = 'running' AND file_sha256 = $2
   AND kind = $3 AND format = $4 AND source = $5
 ORDER BY id`, tenant, r.FileSHA256, r.Kind, r.Format, r.Source)
	if err != nil {
		return Run{}, 0, fmt.Errorf("runs: find interrupted runs: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return Run{}, 0, fmt.Errorf("runs: find interrupted runs: %w", err)
	}
	for _, id := range ids {
		var locked bool
		if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1, $2::int)`, lockClass, lockID(id)).Scan(&locked); err != nil {
			return Run{}, 0, fmt.Errorf("runs: lock run %d: %w", id, err)
		}
		if !locked {
			if held == 0 {
				held = id // its owner is alive, or not yet known to be dead
			}
			continue
		}
		got, err := Get(ctx, conn, tenant, id)
		if err == nil && got.Status == Running {
			return got, 0, nil
		}
		// It finished between the query and the lock.
		if rerr := Release(ctx, conn, id); rerr != nil {
			return Run{}, 0, rerr
		}
		if err != nil && !errors.Is(err, ErrNotFound) {
			return Run{}, 0, err
		}
	}
	return Run{}, held, nil
}

// lockHolder is the server process id of the session that holds run id's
// lock, or 0 when none does (any more), for messages.
func lockHolder(ctx context.Context, conn *pgx.Conn, id int64) int64 {
	var pid int64
	err := conn.QueryRow(ctx, `
SELECT coalesce(max(pid), 0) FROM pg_locks
 WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
   AND classid = $1 AND objid = $2 AND objsubid = 2 AND granted`, lockClass, int64(lockID(id))).Scan(&pid)
	if err != nil {
		return 0
	}
	return pid
}

// lockID maps a run id onto the 32-bit advisory lock key space; ids past
// 2^31 wrap, which only makes two runs billions apart share an owner check.
func lockID(id int64) int32 { return int32(id & 0x7fffffff) }

// Insert adds r as a new running run of the session's login and sets r.ID.
// It goes through a routine (start), so that the transaction it runs in
// may go on calling the ledger's routines on Citus (db.Routine).
func Insert(ctx context.Context, q Querier, tenant string, r *Run) error {
	err := q.QueryRow(ctx, start.Call(), tenant, r.Kind, r.Format, r.Source, r.FileName, r.FileBytes, r.FileSHA256,
		r.Records, r.Skipped, clipAll(r.Warnings)).Scan(&r.ID)
	if err != nil {
		return fmt.Errorf("runs: insert: %w", start.Err(err))
	}
	return nil
}

// Routines are the runs' routines, which `clearing migrate` installs: the
// writes of a run that share a transaction with the ledger's.
var Routines = []db.Routine{start, advance, finish}

var (
	start = db.Routine{Name: "clearing_start_run", Args: "text, text, text, text, text, bigint, bytea, bigint, bigint, text[]",
		Returns: "SETOF bigint", NoRun: true, Body: `
WITH r AS (
    INSERT INTO runs (tenant_id, kind, format, source, file_name, file_bytes, file_sha256, records, skipped, warnings, login)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, session_user)
    RETURNING id
)
SELECT id FROM r`}
	advance = db.Routine{Name: "clearing_advance_run", Args: "text, bigint, bigint" + strings.Repeat(", bigint", 10),
		Returns: "boolean", Body: `
UPDATE runs SET progress = $3, posted = posted + $4, notices = notices + $5, duplicates = duplicates + $6,
                conflicts = conflicts + $7, quarantined = quarantined + $8, settled = settled + $9,
                skipped = skipped + $10, already_quarantined = already_quarantined + $11,
                dismissed = dismissed + $12, released = released + $13
 WHERE tenant_id = $1 AND id = $2 AND status = 'running' AND progress < $3;
RETURN FOUND`}
	finish = db.Routine{Name: "clearing_finish_run", Args: "text, bigint", Returns: "void", Body: `
UPDATE runs SET status = 'done', finished_at = now() WHERE tenant_id = $1 AND id = $2`}
)

// maxErrorBytes bounds one stored reason for a rejection: a reader's
// message may quote a line, and a line may be megabytes long.
const maxErrorBytes = 2000

// Reject records r as a rejected run, finished now, with errs as its
// reasons (at least one), and sets r.ID and r.Status. It writes the run's
// row and nothing else, with the privileges any role that may insert runs
// has; no lock is taken, as nothing will continue a rejected run.
func Reject(ctx context.Context, q Querier, tenant string, r *Run, errs []string) error {
	if len(errs) == 0 {
		errs = []string{"rejected"}
	}
	reasons := clipAll(errs)
	err := q.QueryRow(ctx, `
INSERT INTO runs (tenant_id, kind, format, source, file_name, file_bytes, file_sha256, records, skipped,
                  status, finished_at, errors)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'rejected', now(), $10)
RETURNING id`, tenant, r.Kind, r.Format, r.Source, r.FileName, r.FileBytes, r.FileSHA256, r.Records, r.Skipped,
		reasons).Scan(&r.ID)
	if err != nil {
		return fmt.Errorf("runs: record rejected run: %w", err)
	}
	r.Status, r.Errors = Rejected, reasons
	return nil
}

// clipAll clips each of ss to maxErrorBytes; it never returns nil, which
// the NOT NULL columns would refuse.
func clipAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, e := range ss {
		out[i] = clip(e, maxErrorBytes)
	}
	return out
}

// clip cuts s to at most n bytes, at a rune boundary, saying that it did.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("... (%d bytes more)", len(s)-cut)
}

// Release gives up ownership of run id.
func Release(ctx context.Context, conn *pgx.Conn, id int64) error {
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock($1, $2::int)`, lockClass, lockID(id)); err != nil {
		return fmt.Errorf("runs: release run %d: %w", id, err)
	}
	return nil
}

// Advance records that records up to progress are applied, with the counts
// they added. It must run in the transaction that applied them.
func Advance(ctx context.Context, tx pgx.Tx, tenant string, id, progress int64, c Counts) error {
	var advanced bool
	err := tx.QueryRow(ctx, advance.Call(), tenant, id, progress, c.Posted, c.Notices, c.Duplicates, c.Conflicts,
		c.Quarantined, c.Settled, c.Skipped, c.AlreadyQuarantined, c.Dismissed, c.Released).Scan(&advanced)
	if err != nil {
		return fmt.Errorf("runs: advance run %d: %w", id, advance.Err(err))
	}
	if !advanced {
		return fmt.Errorf("runs: advance run %d to %d: the run is not running or is already past it", id, progress)
	}
	return nil
}

// Finish marks run id, a running run of the session's login, done.
func Finish(ctx context.Context, q Querier, tenant string, id int64) error {
	if _, err := q.Exec(ctx, finish.Call(), tenant, id); err != nil {
		return fmt.Errorf("runs: finish run %d: %w", id, finish.Err(err))
	}
	return nil
}

const selectRun = `
SELECT id, kind, format, source, file_name, file_bytes, file_sha256,
       CASE WHEN status = 'running' AND NOT EXISTS (
                SELECT 1 FROM pg_locks l
                 WHERE l.locktype = 'advisory' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                   AND l.classid = 7411 AND l.objid = (id % 2147483648)::oid AND l.objsubid = 2 AND l.granted)
            THEN 'interrupted' ELSE status END,
       started_at, finished_at, progress, records, skipped, posted, notices, duplicates, conflicts, quarantined,
       settled, already_quarantined, dismissed, released, errors, warnings
  FROM runs`

func scanRun(row pgx.CollectableRow) (Run, error) {
	var r Run
	err := row.Scan(&r.ID, &r.Kind, &r.Format, &r.Source, &r.FileName, &r.FileBytes, &r.FileSHA256,
		&r.Status, &r.StartedAt, &r.FinishedAt, &r.Progress, &r.Records, &r.Skipped,
		&r.Posted, &r.Notices, &r.Duplicates, &r.Conflicts, &r.Quarantined, &r.Settled,
		&r.AlreadyQuarantined, &r.Dismissed, &r.Released, &r.Errors, &r.Warnings)
	return r, err
}

// Get returns run id.
func Get(ctx context.Context, q Querier, tenant string, id int64) (Run, error) {
	rows, err := q.Query(ctx, selectRun+` WHERE tenant_id = $1 AND id = $2`, tenant, id)
	if err != nil {
		return Run{}, fmt.Errorf("runs: get %d: %w", id, err)
	}
	r, err := pgx.CollectExactlyOneRow(rows, scanRun)
	if errors.Is(err, pgx.ErrNoRows) {
		return Run{}, fmt.Errorf("%w: run %d", ErrNotFound, id)
	}
	if err != nil {
		return Run{}, fmt.Errorf("runs: get %d: %w", id, err)
	}
	return r, nil
}

// List returns the newest runs first, at most limit of them.
func List(ctx context.Context, q Querier, tenant string, limit int) ([]Run, error) {
	rows, err := q.Query(ctx, selectRun+` WHERE tenant_id = $1 ORDER BY id DESC LIMIT $2`, tenant, limit)
	if err != nil {
		return nil, fmt.Errorf("runs: list: %w", err)
	}
	out, err := pgx.CollectRows(rows, scanRun)
	if err != nil {
		return nil, fmt.Errorf("runs: list: %w", err)
	}
	return out, nil
}
