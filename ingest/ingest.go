// Package ingest is the intake for both sides: it runs a file through its
// life, opening, detecting, reading and validating it whole and staging its
// records before anything is written, under a run that records it. A
// ledger file (File) is then applied by package ledger in chunks, each chunk
// in one transaction with its audit trail and the run's progress, and a run
// that is interrupted is resumed by the next ingest of the same bytes; a
// statement (Statement) is imported by package statement in one
// transaction. A file that fails validation is rejected whole: only a run
// with status rejected records it. Package runs is the only writer of the
// runs table; ingest is its only caller that writes.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clearing-dev/clearing/formats/registry"
	"github.com/clearing-dev/clearing/internal/db"
	"github.com/clearing-dev/clearing/internal/failpoint"
	"github.com/clearing-dev/clearing/internal/infile"
	"github.com/clearing-dev/clearing/internal/ledger"
	"github.com/clearing-dev/clearing/internal/pii"
	"github.com/clearing-dev/clearing/internal/runs"
)

// DefaultChunkSize is how many records one transaction applies.
const DefaultChunkSize = 20_000

// Formats lists the formats ingest reads. BAI2 is a bank statement: it is
// imported with 'clearing statement import', never posted.
var Formats = []string{registry.ACH, registry.IPM, registry.ISO8583, registry.CSV}

// Options control one ingest.
type Options struct {
	Tenant string
	// Format is one of Formats; empty detects it from the file.
	Format string
	// Source names the other side; it scopes the settlement account and
	// reconciliation. Empty takes the format's default: "ach", "iso8583", or
	// the CSV mapping's source.
	Source string
	DryRun bool
	// AllowRedated posts an ACH file even though its entries match posted
	// ones on everything but their effective date: an operator has found
	// that it is not a re-send.
	AllowRedated bool
	ChunkSize    int
	MaxFileBytes int64
	Hasher       pii.Hasher
	// Reader holds the format-specific settings; its Format, Allowed and
	// Hasher are filled from the fields above.
	Reader registry.Options
	Log    *slog.Logger
	// Progress, when set, is called after each chunk with the records
	// applied so far and the total, and once before the first.
	Progress func(done, total int64)
	// Reading, when set, is called while the file is read and validated,
	// before anything is applied, with the bytes read so far and the
	// file's size: a large file takes seconds to read.
	Reading func(done, total int64)
}

// Summary is what one file's ingest did. Its JSON form is part of the
// command line's contract.
type Summary struct {
	File    string `json:"file"`
	Format  string `json:"format"`
	Source  string `json:"source"`
	RunID   int64  `json:"run_id"`
	Status  string `json:"status"` // "done", "dry_run" or "rejected"
	Records int64  `json:"records"`
	runs.Counts
	Resumed bool `json:"resumed"`
	// InsertFallbacks counts the chunks whose plain INSERT of new keys met
	// a key already posted and that then posted with ON CONFLICT (this
	// process's chunks only, on a resumed run). It says how the records
	// were written, not what became of them, so the summary's JSON leaves
	// it out; --metrics-file reports it.
	InsertFallbacks int64 `json:"-"`
	// HeldBy names the runs that first quarantined this file's records
	// counted as already_quarantined.
	HeldBy []int64 `json:"already_quarantined_by_runs,omitempty"`
	// Warnings say what the file breaks that no key, amount or date
	// depends on; the file was read all the same.
	Warnings []string `json:"warnings,omitempty"`
	Error    string   `json:"error,omitempty"`
}

// NeedsAttention reports whether a person must look at the outcome:
// conflicts, quarantined records, or records an earlier run quarantined
// that are still open (a dismissed one needs nobody).
func (s Summary) NeedsAttention() bool {
	return s.Conflicts > 0 || s.Quarantined > 0 || s.AlreadyQuarantined > 0
}

// File ingests one file. A rejected file returns a *RejectedError
// (which matches ErrRejected) with a Summary whose Status is
// "rejected": nothing from it was written but a run with status rejected
// that records it (none on a dry run), whose id the Summary carries.
func File(ctx context.Context, pool *pgxpool.Pool, path string, o Options) (Summary, error) {
	o = o.withDefaults()
	sum := Summary{File: path, Format: o.Format, Status: "rejected"}
	conn, closeConn, err := connect(ctx, pool)
	if err != nil {
		return sum, err
	}
	defer closeConn()

	ro := o.Reader
	ro.Format, ro.Allowed, ro.Hasher = o.Format, Formats, o.Hasher
	began := time.Now()
	st, err := load(ctx, conn, path, o.MaxFileBytes, ro, o.Reading)
	if err != nil {
		return rejected(ctx, conn, o, sum, err)
	}
	o.Log.Debug("staged", slog.String("file", st.Name), slog.Int64("records", st.Len()), slog.Duration("took", time.Since(began)))
	if o.Format = st.Format; o.Source == "" {
		o.Source = st.Source
	}
	sum.Format, sum.Source, sum.Records, sum.Warnings = o.Format, o.Source, st.Records, st.Warnings
	logWarnings(o.Log, st.Name, st.Warnings)
	if o.DryRun {
		return dryRun(ctx, conn, st, o, sum)
	}
	return apply(ctx, conn, st, o, sum)
}

func (o Options) withDefaults() Options {
	if o.Tenant == "" {
		o.Tenant = "default"
	}
	if o.ChunkSize <= 0 {
		o.ChunkSize = DefaultChunkSize
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = infile.DefaultMaxBytes
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return o
}

// rejected records a file that load refused as a rejected run (none on a
// dry run) and returns err.
func rejected(ctx context.Context, conn *pgx.Conn, o Options, sum Summary, err error) (Summary, error) {
	var rej *RejectedError
	if !errors.As(err, &rej) {
		return sum, err
	}
	if rej.Format != "" {
		sum.Format = rej.Format
	}
	if sum.Source = o.Source; sum.Source == "" {
		sum.Source = rej.Source
	}
	if o.DryRun {
		return sum, err
	}
	id, rerr := reject(ctx, conn, o.Tenant, "ingest", o.Source, err)
	if rerr != nil {
		return sum, rerr
	}
	sum.RunID = id
	return sum, err
}

// apply posts the staged records chunk by chunk under a claimed run.
func apply(ctx context.Context, conn *pgx.Conn, st *loaded, o Options, sum Summary) (Summary, error) {
	run, resumed, err := runs.ClaimWith(ctx, conn, o.Tenant, runs.Run{
		Kind: "ingest", Format: o.Format, Source: o.Source, FileName: st.Name,
		FileBytes: st.Bytes, FileSHA256: st.SHA256, Records: st.Records, Counts: runs.Counts{Skipped: st.Skipped},
		Warnings: st.Warnings,
	}, runs.ClaimOptions{Log: o.Log})
	if err != nil {
		return sum, err
	}
	defer runs.Release(context.WithoutCancel(ctx), conn, run.ID) //nolint:errcheck // the connection closes anyway
	sum.RunID, sum.Resumed = run.ID, resumed
	if resumed {
		o.Log.Info("resuming interrupted run", slog.Int64("run_id", run.ID), slog.Int64("applied", run.Progress),
			slog.Int64("staged", st.Len()))
	}
	b := o.batch(st, run.ID)
	n, start, held := st.Len(), run.Progress+1, ""
	if o.Progress != nil {
		o.Progress(start-1, n)
	}
	for lo := start; lo <= n; lo += int64(o.ChunkSize) {
		hi := min(lo+int64(o.ChunkSize)-1, n)
		began := time.Now()
		var learnt ledger.Batch
		err := db.Retry(ctx, o.Log, "chunk", func() error {
			return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
				if err := failpoint.Hit(failpoint.IngestStaged); err != nil {
					return err
				}
				// A try that fails leaves b as it was: its holds were
				// rolled back with it.
				try := b
				c, err := ledger.Apply(ctx, tx, st.Stage, &try, lo, hi, lo == start)
				if err != nil {
					return err
				}
				if try.Held != "" && held == "" {
					held = try.Held
					logHeld(o.Log, st.Name, held)
				}
				learnt = try
				if c.Total() != hi-lo+1 {
					return fmt.Errorf("ingest: records %d-%d: %d accounted for, want %d", lo, hi, c.Total(), hi-lo+1)
				}
				if err := failpoint.Hit(failpoint.IngestInserted); err != nil {
					return err
				}
				return runs.Advance(ctx, tx, o.Tenant, run.ID, hi, c)
			})
		})
		if err != nil {
			return sum, fmt.Errorf("ingest: %s: records %d-%d: %w (records before %d are applied; run the same command again to resume)", st.Name, lo, hi, err, lo)
		}
		// What the committed chunk learnt holds for the chunks after it.
		b.AllPosted, b.KeysTaken, b.Fallbacks = learnt.AllPosted, learnt.KeysTaken, learnt.Fallbacks
		o.Log.Debug("chunk applied", slog.Int64("from", lo), slog.Int64("to", hi), slog.Duration("took", time.Since(began)))
		if o.Progress != nil {
			o.Progress(hi, n)
		}
		if hi < n {
			if err := failpoint.Hit(failpoint.IngestChunkCommitted); err != nil {
				return sum, err
			}
		}
	}
	if err := failpoint.Hit(failpoint.IngestCommitted); err != nil {
		return sum, err
	}
	if err := runs.Finish(ctx, conn, o.Tenant, run.ID); err != nil {
		return sum, err
	}
	final, err := runs.Get(ctx, conn, o.Tenant, run.ID)
	if err != nil {
		return sum, err
	}
	sum.Status, sum.Counts, sum.InsertFallbacks = "done", final.Counts, b.Fallbacks
	if sum.AlreadyQuarantined > 0 {
		if sum.HeldBy, err = ledger.HeldBy(ctx, conn, o.Tenant, run.ID); err != nil {
			return sum, err
		}
	}
	return sum, nil
}

// dryRun applies everything in one transaction and rolls it back, so the
// counts are exactly what an ingest now would do, and nothing is written.
func dryRun(ctx context.Context, conn *pgx.Conn, st *loaded, o Options, sum Summary) (Summary, error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return sum, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // rolling back is the point
	run := runs.Run{Kind: "ingest", Format: o.Format, Source: o.Source, FileName: st.Name,
		FileBytes: st.Bytes, FileSHA256: st.SHA256, Records: st.Records, Counts: runs.Counts{Skipped: st.Skipped},
		Warnings: st.Warnings}
	if err := runs.Insert(ctx, tx, o.Tenant, &run); err != nil {
		return sum, err
	}
	total := runs.Counts{Skipped: st.Skipped}
	b := o.batch(st, run.ID)
	for lo := int64(1); lo <= st.Len(); lo += int64(o.ChunkSize) {
		hi := min(lo+int64(o.ChunkSize)-1, st.Len())
		c, err := ledger.Apply(ctx, tx, st.Stage, &b, lo, hi, lo == 1)
		if err != nil {
			return sum, err
		}
		total.Add(c)
	}
	sum.Status, sum.Counts, sum.InsertFallbacks = "dry_run", total, b.Fallbacks
	return sum, nil
}

// batch names where the staged file goes, and which checks may hold it
// whole.
func (o Options) batch(st *loaded, runID int64) ledger.Batch {
	return ledger.Batch{Tenant: o.Tenant, Source: o.Source, RunID: runID, Holds: ledger.Holds{
		Positional: st.PositionalKeys,
		Resends:    st.Format == registry.ACH && !o.AllowRedated,
	}}
}

// logHeld says why nothing more of a file posts.
func logHeld(log *slog.Logger, file, verdict string) {
	switch verdict {
	case "possible_resend":
		log.Warn("the file's entries match posted entries on everything but their effective date: it looks like a re-sent file, and nothing of it posts; if it is not, ingest it again with --allow-redated",
			slog.String("file", file))
	default:
		log.Warn("lines keyed by position collide with other content: nothing more of the file posts",
			slog.String("file", file))
	}
}
