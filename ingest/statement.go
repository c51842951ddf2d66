package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clearing-dev/clearing/formats/registry"
	"github.com/clearing-dev/clearing/internal/db"
	"github.com/clearing-dev/clearing/internal/failpoint"
	"github.com/clearing-dev/clearing/internal/infile"
	"github.com/clearing-dev/clearing/internal/pii"
	"github.com/clearing-dev/clearing/internal/runs"
	"github.com/clearing-dev/clearing/internal/statement"
)

// StatementFormats lists the formats a statement can come in.
var StatementFormats = []string{registry.BAI2, registry.CAMT, registry.MT940, registry.ACH, registry.IPM, registry.ISO8583, registry.CSV}

// StatementOptions control one statement import.
type StatementOptions struct {
	Tenant string
	// Source names the other side; reconciliation compares the ledger's
	// postings of a source with the statement lines of the same source.
	Source string
	Format string // one of StatementFormats; empty detects it
	// Perspective is statement.Counterparty or statement.Holder; empty
	// takes Holder for a bank's statement (BAI2, camt, MT940) and
	// Counterparty otherwise.
	Perspective  string
	MaxFileBytes int64
	Hasher       pii.Hasher
	Reader       registry.Options
	Log          *slog.Logger
}

// StatementSummary is what one statement import did. Its JSON form is part
// of the command line's contract.
type StatementSummary struct {
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
	// Warnings say what the file breaks that no key, amount or date
	// depends on; the file was read all the same.
	Warnings []string `json:"warnings,omitempty"`
	Error    string   `json:"error,omitempty"`
}

// Statement imports a statement file as statement lines, in one
// transaction with its run. Lines already imported (same source, key and
// occurrence) are not added again; one with other content is a conflict. A
// rejected file returns a *RejectedError, as File does.
func Statement(ctx context.Context, pool *pgxpool.Pool, path string, o StatementOptions) (StatementSummary, error) {
	sum := StatementSummary{File: path, Format: o.Format, Source: o.Source, Status: "rejected"}
	if o.Source == "" {
		return sum, fmt.Errorf("ingest: a statement needs a source (--source)")
	}
	if p := o.Perspective; p != "" && p != statement.Counterparty && p != statement.Holder {
		return sum, fmt.Errorf("ingest: perspective %q: use %s or %s", p, statement.Counterparty, statement.Holder)
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = infile.DefaultMaxBytes
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	conn, closeConn, err := connect(ctx, pool)
	if err != nil {
		return sum, err
	}
	defer closeConn()
	ro := o.Reader
	ro.Format, ro.Allowed, ro.Hasher, ro.Statement = o.Format, StatementFormats, o.Hasher, true
	st, err := load(ctx, conn, path, o.MaxFileBytes, ro, nil)
	if err != nil {
		var rej *RejectedError
		if errors.As(err, &rej) && rej.Format != "" {
			sum.Format = rej.Format
		}
		id, rerr := reject(ctx, conn, o.Tenant, "statement", o.Source, err)
		if rerr != nil {
			return sum, rerr
		}
		sum.RunID = id
		return sum, err
	}
	sum.Format, sum.Records, sum.Warnings = st.Format, st.Records, st.Warnings
	logWarnings(o.Log, st.Name, st.Warnings)
	holder := o.Perspective == statement.Holder || (o.Perspective == "" && bankStatement(st.Format))
	var run runs.Run
	var c runs.Counts
	var warnings []string
	err = db.Retry(ctx, o.Log, "statement import", func() error {
		return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			// A statement the bank re-sent with other balances keeps the
			// first import's; the run says so.
			batch := statement.Batch{Tenant: o.Tenant, Source: o.Source, Holder: holder}
			restated, err := statement.Restated(ctx, tx, batch, st.Format, st.Balances)
			if err != nil {
				return err
			}
			warnings = append(slices.Clip(st.Warnings), restated...)
			run = runs.Run{Kind: "statement", Format: st.Format, Source: o.Source, FileName: st.Name,
				FileBytes: st.Bytes, FileSHA256: st.SHA256, Records: st.Records, Counts: runs.Counts{Skipped: st.Skipped},
				Warnings: warnings}
			if err := runs.Insert(ctx, tx, o.Tenant, &run); err != nil {
				return err
			}
			batch.RunID = run.ID
			c, err = statement.Import(ctx, tx, st.Stage, batch)
			if err != nil {
				return err
			}
			// The statements' balance checks go with their lines, so that
			// reconciliation can report a statement that does not add up.
			if _, err := statement.Balances(ctx, tx, batch, st.Format, st.Balances); err != nil {
				return err
			}
			if err := failpoint.Hit(failpoint.StatementImported); err != nil {
				return err
			}
			if st.Len() > 0 {
				if err := runs.Advance(ctx, tx, o.Tenant, run.ID, st.Len(), c); err != nil {
					return err
				}
			}
			return runs.Finish(ctx, tx, o.Tenant, run.ID)
		})
	})
	if err != nil {
		return sum, err
	}
	sum.RunID, sum.Status, sum.Warnings = run.ID, "done", warnings
	logWarnings(o.Log, st.Name, warnings[len(st.Warnings):])
	sum.Added, sum.Duplicates, sum.Conflicts, sum.Skipped = c.Posted, c.Duplicates, c.Conflicts, st.Skipped+c.Skipped
	return sum, nil
}

// bankStatement says a format is a bank's statement of our own account,
// whose directions are the holder's: a credit is money in.
func bankStatement(format string) bool {
	return format == registry.BAI2 || format == registry.CAMT || format == registry.MT940
}
