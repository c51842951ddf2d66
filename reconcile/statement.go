// Package reconcile compares the ledger with the other side's view: it
// imports statements (never postings), diffs a source and period with
// set-based SQL, classifies and explains every difference, bridges the
// totals, and proposes corrections under derived keys.
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clearing-dev/clearing/formats/registry"
	"github.com/clearing-dev/clearing/internal/failpoint"
	"github.com/clearing-dev/clearing/internal/infile"
	"github.com/clearing-dev/clearing/internal/ledger"
	"github.com/clearing-dev/clearing/internal/pii"
	"github.com/clearing-dev/clearing/internal/runs"
	"github.com/clearing-dev/clearing/internal/stage"
)

// StatementFormats lists the formats a statement can come in.
var StatementFormats = []string{registry.ACH, registry.ISO8583, registry.CSV, registry.BAI2}

// The perspectives a statement's directions can be written from.
const (
	// Counterparty statements say what happened to the other party's
	// account, as clearing files do: a credit pays the counterparty.
	Counterparty = "counterparty"
	// Holder statements say what happened to our own account at the bank,
	// as a BAI2 statement does: a credit is money in, which is a debit of
	// the counterparty.
	Holder = "holder"
)

// ImportOptions control one statement import.
type ImportOptions struct {
	Tenant string
	// Source names the other side; reconciliation compares the ledger's
	// postings of a source with the statement lines of the same source.
	Source string
	Format string // one of StatementFormats; empty detects it
	// Perspective is Counterparty or Holder; empty takes Holder for BAI2
	// and Counterparty otherwise.
	Perspective  string
	MaxFileBytes int64
	Hasher       pii.Hasher
	Reader       registry.Options
}

// ImportSummary is what one statement import did.
type ImportSummary struct {
	File       string `json:"file"`
	Format     string `json:"format"`
	Source     string `json:"source"`
	RunID      int64  `json:"run_id"`
	Status     string `json:"status"` // "done" or "rejected"
	Records    int64  `json:"records"`
	Added      int64  `json:"added"`
	Duplicates int64  `json:"duplicates"`
	Conflicts  int64  `json:"conflicts"`
	Skipped    int64  `json:"skipped"` // not lines: notices, zero amounts, summaries
	Error      string `json:"error,omitempty"`
}

// ImportStatement loads a statement file into statement lines, in one
// transaction with its run. Lines already imported (same source, key and
// occurrence) are not added again; one with other content is a conflict.
func ImportStatement(ctx context.Context, pool *pgxpool.Pool, path string, o ImportOptions) (ImportSummary, error) {
	sum := ImportSummary{File: path, Format: o.Format, Source: o.Source, Status: "rejected"}
	if o.Source == "" {
		return sum, fmt.Errorf("reconcile: a statement needs a source (--source)")
	}
	if p := o.Perspective; p != "" && p != Counterparty && p != Holder {
		return sum, fmt.Errorf("reconcile: perspective %q: use %s or %s", p, Counterparty, Holder)
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = infile.DefaultMaxBytes
	}
	pc, err := pool.Acquire(ctx)
	if err != nil {
		return sum, fmt.Errorf("reconcile: connect: %w", err)
	}
	conn := pc.Hijack() // it carries the temporary stage
	defer conn.Close(context.WithoutCancel(ctx))
	ro := o.Reader
	ro.Format, ro.Allowed, ro.Hasher = o.Format, StatementFormats, o.Hasher
	st, err := stage.LoadFile(ctx, conn, path, o.MaxFileBytes, ro)
	if err != nil {
		return rejectStatement(ctx, conn, o, sum, err)
	}
	sum.Format, sum.Records = st.Format, st.Records
	perspective := o.Perspective
	if perspective == "" {
		perspective = Counterparty
		if st.Format == registry.BAI2 {
			perspective = Holder
		}
	}
	run := runs.Run{Kind: "statement", Format: st.Format, Source: o.Source, FileName: st.Name,
		FileBytes: st.Bytes, FileSHA256: st.SHA256, Records: st.Records}
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if err := runs.Insert(ctx, tx, o.Tenant, &run); err != nil {
			return err
		}
		var skippedNotices int64
		err := tx.QueryRow(ctx, insertLines, o.Tenant, o.Source, run.ID, perspective == Holder).Scan(&sum.Added, &skippedNotices)
		if err != nil {
			return fmt.Errorf("reconcile: add statement lines: %w", err)
		}
		sum.Skipped = st.Skipped + skippedNotices
		if sum.Duplicates, sum.Conflicts, err = ledger.AuditStatementLines(ctx, tx, o.Tenant, run.ID, o.Source, perspective == Holder); err != nil {
			return err
		}
		if got := sum.Added + sum.Duplicates + sum.Conflicts + skippedNotices; got != st.Len() {
			return fmt.Errorf("reconcile: %d staged records, %d accounted for", st.Len(), got)
		}
		if err := failpoint.Hit(failpoint.StatementImported); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `
UPDATE runs SET status = 'done', finished_at = now(), progress = $3, posted = $4, duplicates = $5,
                conflicts = $6, skipped = $7
 WHERE tenant_id = $1 AND id = $2`, o.Tenant, run.ID, st.Len(), sum.Added, sum.Duplicates, sum.Conflicts, sum.Skipped)
		return err
	})
	if err != nil {
		return sum, err
	}
	sum.RunID, sum.Status = run.ID, "done"
	return sum, nil
}

// rejectStatement records a statement file that LoadFile refused as a
// rejected run, and nothing else, so that the refusal shows in the run
// history; it returns err. When err is not a rejection it writes nothing.
func rejectStatement(ctx context.Context, conn *pgx.Conn, o ImportOptions, sum ImportSummary, err error) (ImportSummary, error) {
	var rej *stage.RejectedError
	if !errors.As(err, &rej) {
		return sum, err
	}
	if rej.Format != "" {
		sum.Format = rej.Format
	}
	run := runs.Run{Kind: "statement", Format: sum.Format, Source: o.Source, FileName: filepath.Base(rej.File),
		FileBytes: rej.Bytes, FileSHA256: rej.SHA256}
	if rerr := runs.Reject(ctx, conn, o.Tenant, &run, rej.Reasons()); rerr != nil {
		// A database failure, not the file's: the command stops on it.
		return sum, fmt.Errorf("reconcile: %s was rejected, and the rejection could not be recorded: %w", rej.File, rerr)
	}
	sum.RunID = run.ID
	return sum, err
}

// insertLines adds the staged records as statement lines. A key repeated in
// the statement gets occurrence 2, 3, ...: both lines are kept, so that a
// double charge on the other side is visible, and importing the same
// statement again collides on (key, occurrence) and adds nothing. Notices
// (zero amounts, prenotes) are not lines.
const insertLines = `
WITH numbered AS (
    SELECT s.*, row_number() OVER (PARTITION BY own_key ORDER BY seq) AS occurrence
      FROM record_stage s
     WHERE kind <> 'notice'
), ins AS (
    INSERT INTO statement_lines (tenant_id, source, line_key, occurrence, reference, alt_reference, amount_minor,
                                 currency, direction, value_date, line_type, account, account_last4, digest,
                                 run_id, record_no, line, detail)
    SELECT $1, $2, own_key, occurrence, coalesce(reference, ''), coalesce(alt_reference, ''), amount_minor,
           currency, CASE WHEN $4 THEN (CASE direction WHEN 'C' THEN 'D' ELSE 'C' END) ELSE direction END,
           value_date, line_type, account, account_last4, digest, $3, seq, line, detail
      FROM numbered
     ORDER BY own_key, occurrence
    ON CONFLICT (tenant_id, source, line_key, occurrence) DO NOTHING
    RETURNING 1
)
SELECT (SELECT count(*) FROM ins), (SELECT count(*) FROM record_stage WHERE kind = 'notice')`
