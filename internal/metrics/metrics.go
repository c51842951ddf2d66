// Package metrics writes what one command did as a Prometheus text-format
// file, for node_exporter's textfile collector: the file is written to a
// temporary name and renamed, so the collector never reads half of it.
//
// Every series carries the command that wrote it ("ingest",
// "statement_import", "reconcile"), so that the files of several commands
// can sit in one collector directory without two of them exporting the same
// series. The file is rewritten whole by every run: its values are those of
// the last run, and only the time of the last success is carried over from
// the file a failed run replaces.
package metrics

import (
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The verdicts of clearing_records_total. A ledger file's records are
// posted, duplicate, conflict, quarantined, notice, skipped or settled; a
// statement's lines are added, duplicate, conflict or skipped; every record
// of a file that was refused whole is rejected.
const (
	Posted      = "posted"
	Duplicate   = "duplicate"
	Conflict    = "conflict"
	Quarantined = "quarantined"
	Notice      = "notice"
	Skipped     = "skipped"
	Settled     = "settled"
	Added       = "added"
	Rejected    = "rejected"
)

// LastSuccess is the name of the gauge that says when the command last
// succeeded, in Unix seconds.
const LastSuccess = "clearing_last_success_timestamp_seconds"

// File is what one command did with one input file.
type File struct {
	Name   string // the file's base name
	Source string
	Format string
	// Status is the run's: done, dry_run or rejected.
	Status string
	// Records counts every record read, skipped ones included (0 when the
	// file was refused before it was read).
	Records int64
	// Verdicts counts the records by verdict; every verdict of the
	// command's kind appears in the file, zeros included, so that a query
	// never has to tell "none" from "not reported".
	Verdicts map[string]int64
}

// Set is the metrics of one command's run.
type Set struct {
	command  string
	reg      *prometheus.Registry
	records  *prometheus.CounterVec
	files    *prometheus.GaugeVec
	fileRecs *prometheus.GaugeVec
	unique   prometheus.Counter
	fallback prometheus.Counter
}

// New returns an empty Set for command.
func New(command string) *Set {
	s := &Set{command: command, reg: prometheus.NewRegistry()}
	labels := prometheus.Labels{"command": command}
	s.records = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "clearing_records_total", ConstLabels: labels,
		Help: "Records of the last run's files, by verdict.",
	}, []string{"file", "source", "format", "verdict"})
	s.fileRecs = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "clearing_file_records", ConstLabels: labels,
		Help: "Records read from each file of the last run, skipped ones included.",
	}, []string{"file", "source", "format"})
	s.files = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "clearing_files", ConstLabels: labels,
		Help: "Files of the last run, by the status of their run (done, dry_run, rejected).",
	}, []string{"status"})
	// The ledger's writes never raise a unique-index violation: every one
	// goes through INSERT ... ON CONFLICT on the natural key, which turns a
	// collision into a duplicate or a conflict. One that is raised all the
	// same (an error with SQLSTATE 23505 that reached the command) means a
	// write bypassed that path, or two paths disagree on a key: it must
	// stay 0, and anything else is worth a page.
	s.unique = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "clearing_unique_violations_total", ConstLabels: labels,
		Help: "Unique-index violations that reached the command in the last run; must be 0.",
	})
	// A chunk of new keys is a plain INSERT, which the unique index may
	// refuse (a file that overlaps the ledger); the chunk then posts with
	// ON CONFLICT. Such a refusal is caught where it is expected and never
	// reaches the command: it is counted here, apart from the violations
	// above.
	s.fallback = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "clearing_insert_fallbacks_total", ConstLabels: labels,
		Help: "Chunks whose plain INSERT of new keys met a posted key and that posted with ON CONFLICT instead, in the last run.",
	})
	s.reg.MustRegister(s.records, s.fileRecs, s.files, s.unique, s.fallback)
	for _, st := range []string{"done", "dry_run", "rejected"} {
		s.files.WithLabelValues(st)
	}
	return s
}

// Registry is where the command's own metrics (reconcile's) register.
func (s *Set) Registry() *prometheus.Registry { return s.reg }

// Command is the command the Set describes.
func (s *Set) Command() string { return s.command }

// AddFile records one file.
func (s *Set) AddFile(f File) {
	s.files.WithLabelValues(f.Status).Inc()
	s.fileRecs.WithLabelValues(f.Name, f.Source, f.Format).Set(float64(f.Records))
	for verdict, n := range f.Verdicts {
		s.records.WithLabelValues(f.Name, f.Source, f.Format, verdict).Add(float64(n))
	}
}

// InsertFallbacks adds n to the chunks that fell back to ON CONFLICT.
func (s *Set) InsertFallbacks(n int64) { s.fallback.Add(float64(n)) }

// UniqueViolations adds n to the unique-index violations.
func (s *Set) UniqueViolations(n int) { s.unique.Add(float64(n)) }

// Write writes the Set to path atomically, with how long the run took,
// its exit code and, when it succeeded, now as the time of the last
// success; a run that failed keeps the time that the file it replaces
// holds, so that an alert on staleness fires however the runs fail.
func (s *Set) Write(path string, took time.Duration, exitCode int, succeeded bool, now time.Time) error {
	labels := prometheus.Labels{"command": s.command}
	duration := prometheus.NewGauge(prometheus.GaugeOpts{Name: "clearing_duration_seconds", ConstLabels: labels,
		Help: "How long the last run took, in seconds."})
	duration.Set(took.Seconds())
	exit := prometheus.NewGauge(prometheus.GaugeOpts{Name: "clearing_exit_code", ConstLabels: labels,
		Help: "The exit code of the last run: 0 ok, 1 error, 2 usage, 3 needs a person."})
	exit.Set(float64(exitCode))
	last := prometheus.NewGauge(prometheus.GaugeOpts{Name: LastSuccess, ConstLabels: labels,
		Help: "When the command last succeeded (exit 0, or 3: done, but something needs a person), in Unix seconds; 0 if never."})
	if succeeded {
		last.Set(float64(now.UnixNano()) / 1e9)
	} else {
		last.Set(previousSuccess(path, s.command))
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(duration, exit, last)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	if err := prometheus.WriteToTextfile(path, prometheus.Gatherers{s.reg, reg}); err != nil {
		return fmt.Errorf("metrics: %s: %w", path, err)
	}
	return nil
}

// previousSuccess is the time of the last success of command that the
// metrics file at path holds, or 0 when it holds none or cannot be read.
func previousSuccess(path, command string) float64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(f)
	if err != nil {
		return 0
	}
	mf, ok := families[LastSuccess]
	if !ok {
		return 0
	}
	for _, m := range mf.GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "command" && l.GetValue() == command && m.GetGauge() != nil {
				return m.GetGauge().GetValue()
			}
		}
	}
	return 0
}

// Float is t, a sum of minor units, as a sample value. Prometheus keeps
// every value as a float64, which holds minor units exactly up to 2^53;
// beyond that the value is rounded, as any Prometheus value would be.
func Float(t *big.Int) float64 {
	f, _ := new(big.Float).SetInt(t).Float64()
	return f
}
