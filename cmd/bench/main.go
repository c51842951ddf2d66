// Command bench measures clearing on large generated files, each figure next
// to a plain PostgreSQL baseline measured in the same run on the same server,
// and writes the results to docs/BENCHMARKS.md. 'make bench' runs it.
//
// It generates deterministic inputs (ACH entries, ISO 8583 messages, CSV
// rows, and a statement with planted breaks), runs the clearing binary on
// them as a user would, and times raw COPY and a bare full outer join in
// process. Timings are reported, never judged: the program exits 0 whenever
// it measured everything, whatever the ratios.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/clearing-dev/clearing/formats/ach"
)

// The modes of the program: the bench of every figure against its
// baselines, the scale run at the most entries one ACH file holds, and the
// independent check at 200,000 ACH entries.
const (
	modeBench = "bench"
	modeScale = "scale"
	modeCheck = "check"
)

// options are the command-line flags.
type options struct {
	mode        string
	clearing    string // the clearing binary to measure
	out         string // the markdown file to write; empty writes none
	databaseURL string // a server to use instead of a throw-away one
	records     int    // records per generated file
	runs        int    // times each figure is measured
	work        string // folder for generated files; empty is a temporary one
	keep        bool   // keep the generated files
	timeout     time.Duration
}

// errUsage marks a mistake in the flags.
var errUsage = errors.New("usage")

func main() {
	o, err := parseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = run(ctx, o, os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	var scale, check bool
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&scale, "scale", false, "the scale run: ACH ingest, re-ingest, statement import and reconciliation at -records and at a tenth of it (default 9,980,000, the most one ACH file holds)")
	fs.BoolVar(&check, "check", false, "the independent check: ingest, re-ingest and reconcile of -records ACH entries (default 200,000) against a COPY of the postings they wrote and a bare join")
	fs.StringVar(&o.clearing, "clearing", "bin/clearing", "the clearing binary to measure")
	fs.StringVar(&o.out, "out", "docs/BENCHMARKS.md", "markdown file for the results; empty writes none (-scale: docs/BENCHMARKS-scale.md; -check: none)")
	fs.StringVar(&o.databaseURL, "database-url", "", "PostgreSQL to use (else CLEARING_BENCH_DATABASE_URL, else a throw-away embedded cluster)")
	fs.IntVar(&o.records, "records", 1_000_000, "records in each generated file (-scale: 9,980,000; -check: 200,000)")
	fs.IntVar(&o.runs, "runs", 3, "times each figure is measured; the report gives the median and the range (-scale: always 1)")
	fs.StringVar(&o.work, "work", "", "folder for the generated files (default: a temporary folder)")
	fs.BoolVar(&o.keep, "keep", false, "keep the generated files")
	fs.DurationVar(&o.timeout, "command-timeout", 10*time.Minute, "stop a clearing command that runs longer, and report it as unfinished (-scale: 3h)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	o.mode = modeBench
	switch {
	case scale && check:
		err := fmt.Errorf("%w: -scale and -check are separate runs", errUsage)
		fmt.Fprintln(stderr, err)
		return o, err
	case scale:
		o.mode, o.runs = modeScale, 1
		defaults(set, &o.records, ach.MaxEntries, &o.out, "docs/BENCHMARKS-scale.md")
		if !set["command-timeout"] {
			o.timeout = 3 * time.Hour
		}
	case check:
		o.mode = modeCheck
		defaults(set, &o.records, 200_000, &o.out, "")
	}
	if o.databaseURL == "" {
		o.databaseURL = os.Getenv("CLEARING_BENCH_DATABASE_URL")
	}
	if o.mode == modeScale && o.records > ach.MaxEntries {
		err := fmt.Errorf("%w: -records %d: one ACH file holds at most %d entries", errUsage, o.records, ach.MaxEntries)
		fmt.Fprintln(stderr, err)
		return o, err
	}
	if fs.NArg() > 0 || o.records < 1000 || o.runs < 1 || o.timeout <= 0 {
		err := fmt.Errorf("%w: -records must be at least 1000, -runs and -command-timeout positive, and no arguments are taken", errUsage)
		fmt.Fprintln(stderr, err)
		return o, err
	}
	return o, nil
}

// defaults gives -records and -out a mode's defaults where they were not
// set on the command line.
func defaults(set map[string]bool, records *int, n int, out *string, path string) {
	if !set["records"] {
		*records = n
	}
	if !set["out"] {
		*out = path
	}
}

// run measures everything and writes the report. The generated files and a
// throw-away server are removed whatever happens.
func run(ctx context.Context, o options, stdout io.Writer) (err error) {
	bin, err := filepath.Abs(o.clearing)
	if err != nil {
		return err
	}
	if st, err := os.Stat(bin); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable clearing binary (build it with 'make build')", o.clearing)
	}
	work, cleanWork, err := workDir(o.work, o.keep)
	if err != nil {
		return err
	}
	defer cleanWork()
	if o.mode == modeScale {
		if err := checkDisk(o.records, work, o.databaseURL); err != nil {
			return err
		}
	}
	srv, err := openServer(ctx, o.databaseURL)
	if err != nil {
		return err
	}
	defer srv.close(context.WithoutCancel(ctx))
	b := newBench(bin, work, srv, o.records, o.runs, o.timeout, stdout)
	b.mode = o.mode
	if err := b.measureAll(ctx); err != nil {
		return err
	}
	if o.out == "" {
		if o.mode == modeCheck {
			var sb strings.Builder
			b.report().write(&sb)
			fmt.Fprintf(stdout, "\n%s", sb.String())
		}
		return nil
	}
	if err := writeMarkdown(o.out, b.report()); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nwrote %s\n", o.out)
	return nil
}

// workDir returns the folder for generated files and a function that
// removes what should not stay.
func workDir(dir string, keep bool) (string, func(), error) {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", nil, err
		}
		abs, err := filepath.Abs(dir)
		return abs, func() {}, err
	}
	tmp, err := os.MkdirTemp("", "clearing-bench-work-")
	if err != nil {
		return "", nil, err
	}
	clean := func() {
		if keep {
			fmt.Fprintf(os.Stderr, "bench: kept the generated files in %s\n", tmp)
			return
		}
		os.RemoveAll(tmp)
	}
	return tmp, clean, nil
}
