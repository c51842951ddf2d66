package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/spf13/pflag"

	"github.com/clearing-dev/clearing/ingest"
	"github.com/clearing-dev/clearing/internal/ledger"
	"github.com/clearing-dev/clearing/internal/metrics"
	"github.com/clearing-dev/clearing/internal/report"
)

// commandMetrics collects what a command did for --metrics-file; with no
// path it does nothing.
type commandMetrics struct {
	path string
	set  *metrics.Set
}

// bindMetricsFlag declares --metrics-file, which ingest, statement import
// and reconcile share.
func bindMetricsFlag(f *pflag.FlagSet, path *string) {
	f.StringVar(path, "metrics-file", "", "write Prometheus metrics of the run to this file (atomically), for node_exporter's textfile collector; name it *.prom")
}

func newCommandMetrics(path, command string) *commandMetrics {
	m := &commandMetrics{path: path}
	if path != "" {
		m.set = metrics.New(command)
	}
	return m
}

// ingested records one ledger file's summary.
func (m *commandMetrics) ingested(s ingest.Summary) {
	if m.set == nil {
		return
	}
	v := map[string]int64{
		metrics.Posted: s.Posted, metrics.Duplicate: s.Duplicates, metrics.Conflict: s.Conflicts,
		// A record that an earlier run holds is held still: it is
		// quarantined, as this run's summary counts it apart.
		metrics.Quarantined: s.Quarantined + s.AlreadyQuarantined, metrics.Notice: s.Notices,
		metrics.Skipped: s.Skipped + s.Dismissed, metrics.Settled: s.Settled, metrics.Rejected: 0,
	}
	if s.Status == "rejected" {
		v[metrics.Rejected] = s.Records
	}
	m.set.AddFile(metrics.File{Name: filepath.Base(s.File), Source: s.Source, Format: s.Format, Status: s.Status, Records: s.Records, Verdicts: v})
	m.set.InsertFallbacks(s.InsertFallbacks)
}

// imported records one statement file's summary.
func (m *commandMetrics) imported(s ingest.StatementSummary) {
	if m.set == nil {
		return
	}
	v := map[string]int64{metrics.Added: s.Added, metrics.Duplicate: s.Duplicates, metrics.Conflict: s.Conflicts,
		metrics.Skipped: s.Skipped, metrics.Rejected: 0}
	if s.Status == "rejected" {
		v[metrics.Rejected] = s.Records
	}
	m.set.AddFile(metrics.File{Name: filepath.Base(s.File), Source: s.Source, Format: s.Format, Status: s.Status, Records: s.Records, Verdicts: v})
}

// reconciled records a stored reconciliation and what its source leaves
// for a person.
func (m *commandMetrics) reconciled(ctx context.Context, q ledger.Querier, tenant string, r *report.Report) error {
	if m.set == nil {
		return nil
	}
	rem := make([]metrics.Remainder, len(r.Bridge))
	for i, b := range r.Bridge {
		rem[i] = metrics.Remainder{Currency: b.Currency, Unexplained: b.Unexplained.Big()}
	}
	return m.set.AddReconcile(ctx, q, tenant, r.Source, rem)
}

// finish writes the metrics file for a command that ends with err, and
// returns err; a file that cannot be written fails a command that had
// succeeded, since whoever asked for it alerts on it.
func (m *commandMetrics) finish(g *globalOptions, err error) error {
	if m.set == nil {
		return err
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == pgerrcode.UniqueViolation {
		m.set.UniqueViolations(1)
	}
	code := exitCode(g, err)
	werr := m.set.Write(m.path, g.now().Sub(g.began), code, code == exitOK || code == exitAttention, g.now())
	if werr == nil {
		return err
	}
	if err != nil {
		g.log.Error("metrics file not written", slog.String("file", m.path), slog.String("error", werr.Error()))
		return err
	}
	return fmt.Errorf("the run is done, but its metrics were not written: %w", werr)
}
