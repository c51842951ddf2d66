package main

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clearing-dev/clearing/ingest"
)

// The ledger floor is what the writes that every ingest must make cost on
// their own, as bare SQL on the server with the file's rows already there:
// per chunk, in one transaction, INSERT ... ON CONFLICT DO NOTHING RETURNING
// into the postings table and the two legs of each new posting (checked by
// the ledger's own balance trigger); for a re-ingest, the same statement
// finding every key taken, and one audit row per record naming the posting
// it met. No parsing, no staging, no links, notices or run bookkeeping. It is
// measured into empty twins of postings, legs and audit_events, like the
// COPY baseline, so the ratio of the floor to COPY is the most any ingest
// built on those writes could reach on this server.
const (
	floorStage    = "bench_floor_stage"
	floorPostings = "bench_floor_postings"
	floorLegs     = "bench_floor_legs"
	floorAudit    = "bench_floor_audit"
)

const createFloor = `
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

const dropFloor = `DROP TABLE IF EXISTS ` + floorPostings + `, ` + floorLegs + `, ` + floorAudit + `, ` + floorStage

var floorStageColumns = []string{"seq", "key", "reference", "alt_reference", "value_date", "amount_minor", "currency",
	"direction", "account", "account_last4", "digest", "line", "detail"}

// floorPost is the posting statement of a chunk, as the ledger's: the new
// postings and two legs for each.
const floorPost = `
WITH ins AS (
    INSERT INTO ` + floorPostings + ` (tenant_id, posting_key, kind, source, reference, alt_reference, value_date,
                          amount_minor, currency, direction, account, account_last4, digest, run_id, record_no, line, detail)
    SELECT $1, key, 'clearing', $2, reference, alt_reference, value_date,
           amount_minor, currency, direction, account, account_last4, digest, 0, seq, line, detail
      FROM ` + floorStage + ` WHERE seq BETWEEN $3 AND $4
     ORDER BY key
    ON CONFLICT (tenant_id, posting_key) DO NOTHING
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

// floorAuditRows is the audit of a chunk whose every record is a
// duplicate: one slim row per record, naming the posting it met.
const floorAuditRows = `
INSERT INTO ` + floorAudit + ` (tenant_id, record_key, own_key, verdict, needs_attention, run_id, record_no, line,
                          existing_posting_id, kind)
SELECT $1, s.key, s.key, 'duplicate', false, 0, s.seq, s.line, p.id, 'clearing'
  FROM ` + floorStage + ` s
 CROSS JOIN LATERAL (SELECT id FROM ` + floorPostings + ` WHERE tenant_id = $1 AND posting_key = s.key LIMIT 1) p
 WHERE s.seq BETWEEN $2 AND $3`

// floor measures the ledger floor for rows: the new file's writes, then the
// same file's again with its audit. The tables are dropped afterwards.
func (b *bench) floor(ctx context.Context, source string, rows []postingRow) (first, again time.Duration, err error) {
	pc, err := b.srv.pool.Acquire(ctx)
	if err != nil {
		return 0, 0, err
	}
	// The temporary stage belongs to this session; the session is closed
	// rather than handed back with it.
	conn := pc.Hijack()
	defer conn.Close(context.WithoutCancel(ctx))
	defer b.srv.pool.Exec(context.WithoutCancel(ctx), dropFloor) //nolint:errcheck // best effort
	if _, err := conn.Exec(ctx, dropFloor+`; SET jit = off; SET temp_buffers = '512MB'`); err != nil {
		return 0, 0, err
	}
	if _, err := conn.Exec(ctx, createFloor); err != nil {
		return 0, 0, fmt.Errorf("create the floor's tables: %w", err)
	}
	src := &rowSource{rows: rows, values: func(v []any, i int, r *postingRow) []any {
		return append(v, int64(i), r.key, r.reference, r.altReference, r.valueDate, r.amount,
			r.currency, r.direction, r.account, r.last4, r.digest[:], r.line, r.detail)
	}}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{floorStage}, floorStageColumns, src); err != nil {
		return 0, 0, fmt.Errorf("load the floor's stage: %w", err)
	}
	if _, err := conn.Exec(ctx, `CREATE INDEX ON `+floorStage+` USING brin (seq); ANALYZE `+floorStage); err != nil {
		return 0, 0, err
	}
	tenant, n := b.tenant("floor"), int64(len(rows))
	chunks := func(each func(tx pgx.Tx, lo, hi int64) error) (time.Duration, error) {
		b.srv.checkpoint(ctx)
		began := time.Now()
		for lo := int64(1); lo <= n; lo += ingest.DefaultChunkSize {
			hi := min(lo+ingest.DefaultChunkSize-1, n)
			if err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
				if _, err := tx.Exec(ctx, `SET LOCAL work_mem = '64MB'`); err != nil {
					return err
				}
				return each(tx, lo, hi)
			}); err != nil {
				return 0, fmt.Errorf("records %d-%d: %w", lo, hi, err)
			}
		}
		return time.Since(began), nil
	}
	var posted, reposted int64
	first, err = chunks(func(tx pgx.Tx, lo, hi int64) error {
		var k int64
		err := tx.QueryRow(ctx, floorPost, tenant, source, lo, hi).Scan(&k)
		posted += k
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("the floor, new file: %w", err)
	}
	again, err = chunks(func(tx pgx.Tx, lo, hi int64) error {
		var k int64
		if err := tx.QueryRow(ctx, floorPost, tenant, source, lo, hi).Scan(&k); err != nil {
			return err
		}
		reposted += k
		_, err := tx.Exec(ctx, floorAuditRows, tenant, lo, hi)
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("the floor, re-ingest: %w", err)
	}
	if posted != n || reposted != 0 {
		return 0, 0, fmt.Errorf("the floor posted %d of %d rows, and %d again", posted, n, reposted)
	}
	return first, again, nil
}
