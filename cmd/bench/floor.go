package main

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clearing-dev/clearing/ingest"
)

// The ledger floor is what the writes that every ingest must make cost on
// their own, as the fastest bare SQL the bench knows, on the server with the
// file's rows already there (a temporary table loaded before the clock
// starts). DESIGN.md §2 fixes the contract, not the mechanism: each chunk
// commits its postings, legs, audit rows and the run's progress together.
// So, per chunk of ingest.DefaultChunkSize rows in one transaction:
//
//   - new file: every row as a posting with its two legs (checked by the
//     ledger's own balance trigger), and the run's progress; the posting
//     statement is measured two ways, INSERT ... ON CONFLICT DO NOTHING
//     RETURNING and a plain INSERT ... RETURNING inside a savepoint (what
//     DESIGN allows for a chunk of new keys), and the faster is the floor;
//   - re-ingest: one audit row per record naming the posting it met (found
//     by a primary-key probe, whose digest gives the verdict), and the run's
//     progress. Nothing else is a write a re-ingest must make.
//
// Both open and close their run row. No parsing, staging, links, notices or
// quarantine. It is measured into empty twins of runs, postings, legs and
// audit_events with their indexes and without their check constraints, as
// the COPY baseline (a notice's row has amount 0 there), so the floor's
// ratio to COPY is the most any ingest built on those writes could reach on
// this server, and ingest's ratio to the floor is how close it comes.
const (
	floorStage    = "bench_floor_stage"
	floorRuns     = "bench_floor_runs"
	floorPostings = "bench_floor_postings"
	floorLegs     = "bench_floor_legs"
	floorAudit    = "bench_floor_audit"
)

const createFloor = `
CREATE TABLE ` + floorRuns + ` (LIKE runs INCLUDING DEFAULTS INCLUDING IDENTITY INCLUDING INDEXES INCLUDING STORAGE);
CREATE TABLE ` + floorPostings + ` (LIKE postings INCLUDING DEFAULTS INCLUDING IDENTITY INCLUDING INDEXES INCLUDING STORAGE);
CREATE TABLE ` + floorLegs + ` (LIKE legs INCLUDING DEFAULTS INCLUDING INDEXES INCLUDING STORAGE);
CREATE TABLE ` + floorAudit + ` (LIKE audit_events INCLUDING DEFAULTS INCLUDING IDENTITY INCLUDING INDEXES INCLUDING STORAGE);
CREATE TRIGGER legs_balance AFTER INSERT ON ` + floorLegs + ` REFERENCING NEW TABLE AS new_legs
    FOR EACH STATEMENT EXECUTE FUNCTION clearing_check_legs();
CREATE TEMP TABLE ` + floorStage + ` (
    seq bigint NOT NULL, key text COLLATE "C" NOT NULL, reference text COLLATE "C", alt_reference text COLLATE "C",
    value_date date NOT NULL, amount_minor bigint NOT NULL, currency text NOT NULL, direction text NOT NULL,
    account text COLLATE "C" NOT NULL, account_last4 text NOT NULL, digest bytea NOT NULL, line bigint NOT NULL,
    detail text NOT NULL)`

const dropFloor = `DROP TABLE IF EXISTS ` + floorRuns + `, ` + floorPostings + `, ` + floorLegs + `, ` + floorAudit + `, ` + floorStage

var floorStageColumns = []string{"seq", "key", "reference", "alt_reference", "value_date", "amount_minor", "currency",
	"direction", "account", "account_last4", "digest", "line", "detail"}

// floorWay is one way of writing a new file's postings.
type floorWay int

const (
	floorOnConflict floorWay = iota // INSERT ... ON CONFLICT DO NOTHING RETURNING
	floorPlain                      // INSERT ... RETURNING in a savepoint
	floorWays
)

func (w floorWay) String() string {
	if w == floorPlain {
		return "plain INSERT in a savepoint"
	}
	return "INSERT ... ON CONFLICT DO NOTHING"
}

// floorPost is the posting statement of a chunk, as the ledger's: the new
// postings and two legs for each. conflict is the ON CONFLICT clause or "".
func floorPost(conflict string) string {
	return `
WITH ins AS (
    INSERT INTO ` + floorPostings + ` (tenant_id, posting_key, kind, source, reference, alt_reference, value_date,
                          amount_minor, currency, direction, account, account_last4, digest, run_id, record_no, line, detail)
    SELECT $1, key, 'clearing', $2, reference, alt_reference, value_date,
           amount_minor, currency, direction, account, account_last4, digest, $5, seq, line, detail
      FROM ` + floorStage + ` WHERE seq BETWEEN $3 AND $4
     ORDER BY key
    ` + conflict + `
    RETURNING id, account, direction, amount_minor, currency, value_date
), leg AS (
    INSERT INTO ` + floorLegs + ` (tenant_id, posting_id, leg_no, account, direction, amount_minor, currency, value_date)
    SELECT $1, ins.id, l.leg_no, l.account, l.direction, ins.amount_minor, ins.currency, ins.value_date
      FROM ins CROSS JOIN LATERAL (VALUES
           (1::smallint, ins.account, ins.direction),
           (2::smallint, 'settlement:' || $2, CASE ins.direction WHEN 'C' THEN 'D' ELSE 'C' END)
      ) AS l(leg_no, account, direction)
)
SELECT count(*) FROM ins`
}

var floorPostSQL = [floorWays]string{
	floorOnConflict: floorPost("ON CONFLICT (tenant_id, posting_key) DO NOTHING"),
	floorPlain:      floorPost(""),
}

// floorAuditRows is the audit of a chunk whose every key is taken: one slim
// row per record, naming the posting it met, with the verdict that
// comparing the digests gives (every one a duplicate here).
const floorAuditRows = `
INSERT INTO ` + floorAudit + ` (tenant_id, record_key, own_key, verdict, needs_attention, run_id, record_no, line,
                          existing_posting_id, kind)
SELECT $1, s.key, s.key, CASE WHEN p.digest = s.digest THEN 'duplicate' ELSE 'conflict' END,
       p.digest <> s.digest, $4, s.seq, s.line, p.id, 'clearing'
  FROM ` + floorStage + ` s
 CROSS JOIN LATERAL (SELECT id, digest FROM ` + floorPostings + ` WHERE tenant_id = $1 AND posting_key = s.key LIMIT 1) p
 WHERE s.seq BETWEEN $2 AND $3`

// The run row, as the ledger keeps it: opened with the file's counts,
// advanced in each chunk's transaction, finished at the end.
const (
	floorRunOpen = `INSERT INTO ` + floorRuns + ` (tenant_id, kind, format, source, file_name, records)
VALUES ($1, 'ingest', $2, $2, 'bench', $3) RETURNING id`
	floorRunAdvance = `UPDATE ` + floorRuns + ` SET progress = $3, posted = posted + $4, duplicates = duplicates + $5
 WHERE tenant_id = $1 AND id = $2 AND status = 'running' AND progress < $3`
	floorRunFinish = `UPDATE ` + floorRuns + ` SET status = 'done', finished_at = now() WHERE tenant_id = $1 AND id = $2`
)

// floorResult is one measurement of the floor.
type floorResult struct {
	ways  [floorWays]time.Duration // a new file's writes, each way; 0 = not measured
	again time.Duration            // a re-ingest's writes

	// What the twins held at the end, checked against the rows: every row a
	// posting with two legs, one audit row each, two finished runs (the last
	// new file and the re-ingest) that reached the last row.
	postings, legs, audit, runsDone int64
}

// newFile is the floor of a new file: the faster of the ways measured.
func (r floorResult) newFile() (time.Duration, floorWay) {
	best, way := time.Duration(0), floorOnConflict
	for w, d := range r.ways {
		if d > 0 && (best == 0 || d < best) {
			best, way = d, floorWay(w)
		}
	}
	return best, way
}

// floor measures the ledger floor for rows: a new file's writes in each of
// ways (the twins emptied before each), then the same rows again as a
// re-ingest. The tables are dropped afterwards.
func (b *bench) floor(ctx context.Context, source string, rows []postingRow, ways []floorWay) (floorResult, error) {
	var res floorResult
	pc, err := b.srv.pool.Acquire(ctx)
	if err != nil {
		return res, err
	}
	// The temporary stage belongs to this session; the session is closed
	// rather than handed back with it.
	conn := pc.Hijack()
	defer conn.Close(context.WithoutCancel(ctx))
	defer b.srv.pool.Exec(context.WithoutCancel(ctx), dropFloor) //nolint:errcheck // best effort
	if _, err := conn.Exec(ctx, dropFloor+`; SET jit = off; SET temp_buffers = '512MB'`); err != nil {
		return res, err
	}
	if _, err := conn.Exec(ctx, createFloor); err != nil {
		return res, fmt.Errorf("create the floor's tables: %w", err)
	}
	src := &rowSource{rows: rows, values: func(v []any, i int, r *postingRow) []any {
		return append(v, int64(i), r.key, r.reference, r.altReference, r.valueDate, r.amount,
			r.currency, r.direction, r.account, r.last4, r.digest[:], r.line, r.detail)
	}}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{floorStage}, floorStageColumns, src); err != nil {
		return res, fmt.Errorf("load the floor's stage: %w", err)
	}
	if _, err := conn.Exec(ctx, `CREATE INDEX ON `+floorStage+` USING brin (seq); ANALYZE `+floorStage); err != nil {
		return res, err
	}
	f := floorRun{conn: conn, tenant: b.tenant("floor"), source: source, n: int64(len(rows))}
	for _, w := range ways {
		if _, err := conn.Exec(ctx, `TRUNCATE `+floorRuns+`, `+floorPostings+`, `+floorLegs+` RESTART IDENTITY`); err != nil {
			return res, err
		}
		b.srv.checkpoint(ctx)
		if res.ways[w], err = f.newFile(ctx, w); err != nil {
			return res, fmt.Errorf("the floor, new file, %s: %w", w, err)
		}
	}
	b.srv.checkpoint(ctx)
	if res.again, err = f.reingest(ctx); err != nil {
		return res, fmt.Errorf("the floor, re-ingest: %w", err)
	}
	err = conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM `+floorPostings+`), (SELECT count(*) FROM `+floorLegs+`),
       (SELECT count(*) FROM `+floorAudit+` WHERE existing_posting_id IS NOT NULL AND verdict = 'duplicate'),
       (SELECT count(*) FROM `+floorRuns+` WHERE status = 'done' AND progress = $1)`, f.n).
		Scan(&res.postings, &res.legs, &res.audit, &res.runsDone)
	if err != nil {
		return res, fmt.Errorf("count the floor's rows: %w", err)
	}
	if res.postings != f.n || res.legs != 2*f.n || res.audit != f.n || res.runsDone != 2 {
		return res, fmt.Errorf("the floor wrote %d postings, %d legs, %d audit rows and finished %d runs for %d rows; want %d, %d, %d and 2",
			res.postings, res.legs, res.audit, res.runsDone, f.n, f.n, 2*f.n, f.n)
	}
	return res, nil
}

// floorRun is one pass of the floor over the stage.
type floorRun struct {
	conn           *pgx.Conn
	tenant, source string
	n              int64
}

// chunks opens a run row, calls each for every chunk in a transaction of its
// own that also advances the run, and finishes the run: the whole of it
// timed.
func (f floorRun) chunks(ctx context.Context, each func(tx pgx.Tx, run, lo, hi int64) (posted, dups int64, err error)) (time.Duration, error) {
	began := time.Now()
	var run int64
	if err := f.conn.QueryRow(ctx, floorRunOpen, f.tenant, f.source, f.n).Scan(&run); err != nil {
		return 0, fmt.Errorf("open the run: %w", err)
	}
	for lo := int64(1); lo <= f.n; lo += ingest.DefaultChunkSize {
		hi := min(lo+ingest.DefaultChunkSize-1, f.n)
		err := pgx.BeginFunc(ctx, f.conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SET LOCAL work_mem = '64MB'`); err != nil {
				return err
			}
			posted, dups, err := each(tx, run, lo, hi)
			if err != nil {
				return err
			}
			tag, err := tx.Exec(ctx, floorRunAdvance, f.tenant, run, hi, posted, dups)
			if err == nil && tag.RowsAffected() != 1 {
				err = fmt.Errorf("run %d not advanced to %d", run, hi)
			}
			return err
		})
		if err != nil {
			return 0, fmt.Errorf("records %d-%d: %w", lo, hi, err)
		}
	}
	if _, err := f.conn.Exec(ctx, floorRunFinish, f.tenant, run); err != nil {
		return 0, fmt.Errorf("finish the run: %w", err)
	}
	return time.Since(began), nil
}

// newFile writes every row as a posting with its legs, the way w.
func (f floorRun) newFile(ctx context.Context, w floorWay) (time.Duration, error) {
	var total int64
	took, err := f.chunks(ctx, func(tx pgx.Tx, run, lo, hi int64) (int64, int64, error) {
		q := tx
		if w == floorPlain {
			sp, err := tx.Begin(ctx) // a savepoint: a refused chunk would fall back inside it
			if err != nil {
				return 0, 0, err
			}
			defer sp.Rollback(ctx) //nolint:errcheck // a no-op once released
			q = sp
		}
		var k int64
		if err := q.QueryRow(ctx, floorPostSQL[w], f.tenant, f.source, lo, hi, run).Scan(&k); err != nil {
			return 0, 0, err
		}
		if w == floorPlain {
			if err := q.Commit(ctx); err != nil {
				return 0, 0, err
			}
		}
		total += k
		return k, 0, nil
	})
	if err == nil && total != f.n {
		err = fmt.Errorf("posted %d of %d rows", total, f.n)
	}
	return took, err
}

// reingest writes one audit row per row, naming the posting it met.
func (f floorRun) reingest(ctx context.Context) (time.Duration, error) {
	var total int64
	took, err := f.chunks(ctx, func(tx pgx.Tx, run, lo, hi int64) (int64, int64, error) {
		tag, err := tx.Exec(ctx, floorAuditRows, f.tenant, lo, hi, run)
		total += tag.RowsAffected()
		return 0, tag.RowsAffected(), err
	})
	if err == nil && total != f.n {
		err = fmt.Errorf("audited %d of %d rows", total, f.n)
	}
	return took, err
}
