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
	"syscall"
	"time"
)

// options are the command-line flags.
type options struct {
	clearing    string // the clearing binary to measure
	out         string // the markdown file to write; empty writes none
	databaseURL string // a server to use instead of a throw-away one
	records     int    // records per generated file
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
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.clearing, "clearing", "bin/clearing", "the clearing binary to measure")
	fs.StringVar(&o.out, "out", "docs/BENCHMARKS.md", "markdown file for the results; empty writes none")
	fs.StringVar(&o.databaseURL, "database-url", "", "PostgreSQL to use (else CLEARING_BENCH_DATABASE_URL, else a throw-away embedded cluster)")
	fs.IntVar(&o.records, "records", 1_000_000, "records in each generated file")
	fs.StringVar(&o.work, "work", "", "folder for the generated files (default: a temporary folder)")
	fs.BoolVar(&o.keep, "keep", false, "keep the generated files")
	fs.DurationVar(&o.timeout, "command-timeout", 10*time.Minute, "stop a clearing command that runs longer, and report it as unfinished")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.databaseURL == "" {
		o.databaseURL = os.Getenv("CLEARING_BENCH_DATABASE_URL")
	}
	if fs.NArg() > 0 || o.records < 1000 || o.timeout <= 0 {
		err := fmt.Errorf("%w: -records must be at least 1000, -command-timeout positive, and no arguments are taken", errUsage)
		fmt.Fprintln(stderr, err)
		return o, err
	}
	return o, nil
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
	srv, err := openServer(ctx, o.databaseURL)
	if err != nil {
		return err
	}
	defer srv.close(context.WithoutCancel(ctx))
	b := newBench(bin, work, srv, o.records, o.timeout, stdout)
	if err := b.measureAll(ctx); err != nil {
		return err
	}
	if o.out == "" {
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
