package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/formats/registry"
	"github.com/clearing-dev/clearing/internal/infile"
	"github.com/clearing-dev/clearing/internal/runs"
	"github.com/clearing-dev/clearing/internal/stage"
)

// The intake is what ledger files and statements share: a connection of
// their own, the whole file opened, detected, read, validated and staged
// before anything is written, and a rejected run for a file that is
// refused.

// connect opens a connection of the file's own, configured as the pool's
// are (its BeforeConnect and AfterConnect included). It carries the temporary stage and the
// run's lock, and is closed afterwards (close) rather than handed to
// someone else with either. A new session, not one of the pool's: the
// stage sizes the session's temporary buffers, which PostgreSQL refuses
// once a session has used a temporary table (a reconciliation on the same
// pool, say).
func connect(ctx context.Context, pool *pgxpool.Pool) (conn *pgx.Conn, close func(), err error) {
	cfg := pool.Config() // a copy, ConnConfig included
	if cfg.BeforeConnect != nil {
		if err := cfg.BeforeConnect(ctx, cfg.ConnConfig); err != nil {
			return nil, nil, fmt.Errorf("ingest: connect: %w", err)
		}
	}
	if conn, err = pgx.ConnectConfig(ctx, cfg.ConnConfig); err != nil {
		return nil, nil, fmt.Errorf("ingest: connect: %w", err)
	}
	if cfg.AfterConnect != nil {
		if err := cfg.AfterConnect(ctx, conn); err != nil {
			conn.Close(context.WithoutCancel(ctx))
			return nil, nil, fmt.Errorf("ingest: connect: %w", err)
		}
	}
	return conn, func() { conn.Close(context.WithoutCancel(ctx)) }, nil
}

// loaded is a file parsed, validated and staged.
type loaded struct {
	*stage.Stage
	Format  string
	Source  string // the format's default source
	Name    string // the file's base name
	Bytes   int64
	SHA256  []byte
	Records int64 // every record read, skipped ones included
	Skipped int64
	// PositionalKeys: see registry.Opened.
	PositionalKeys bool
	// Warnings are what the reader found wrong that no money depends on.
	Warnings []string
	// Balances are the statements' balance checks (see registry.Opened).
	Balances []formats.StatementBalance
}

// load parses the whole file at path into a new stage on conn. Any bad
// record rejects the file with a *RejectedError; parsing goes on past the
// first to report up to maxReportedErrors. Nothing outside the connection's
// temporary stage is written. reading, when not nil, is told the bytes
// read so far after each record.
func load(ctx context.Context, conn *pgx.Conn, path string, maxBytes int64, ro registry.Options, reading func(done, total int64)) (*loaded, error) {
	in, err := infile.Open(path, maxBytes)
	if err != nil {
		rej := &RejectedError{File: path, Errs: []error{err}, Format: ro.Format}
		rej.Bytes, rej.SHA256 = infile.Probe(path)
		return nil, rej
	}
	defer in.Close()
	opened, err := registry.Open(in, path, ro)
	if err != nil {
		return nil, readRest(in, &RejectedError{File: path, Errs: []error{err}, Format: ro.Format})
	}
	stg, err := stage.New(ctx, conn)
	if err != nil {
		return nil, err
	}
	l := &loaded{Stage: stg, Format: opened.Format, Source: opened.Source, Name: filepath.Base(path), Bytes: in.Size(),
		PositionalKeys: opened.PositionalKeys}
	rd := opened.Reader
	var firstBad error
	next := func() (*formats.Record, error) {
		for {
			rec, err := rd.Next()
			if errors.Is(err, io.EOF) {
				return nil, nil
			}
			if err != nil {
				firstBad = err
				return nil, err
			}
			l.Records++
			if reading != nil {
				reading(in.Done(), in.Size())
			}
			if rec.Kind == formats.Skip {
				l.Skipped++
				continue
			}
			if err := formats.Check(&rec); err != nil {
				firstBad = err
				return nil, err
			}
			return &rec, nil
		}
	}
	if _, err := stg.Load(ctx, next); err != nil {
		if firstBad == nil {
			return nil, err // a database error, not the file's fault
		}
		rej := collectErrors(path, rd, firstBad)
		rej.Format, rej.Source = opened.Format, opened.Source
		return nil, readRest(in, rej)
	}
	if opened.Warnings != nil {
		l.Warnings = opened.Warnings()
	}
	if opened.Skipped != nil {
		n := opened.Skipped()
		l.Records += n
		l.Skipped += n
	}
	if opened.Balances != nil {
		l.Balances = opened.Balances()
	}
	if l.SHA256, err = in.Finish(); err != nil {
		// The file changed while it was read: there is no one checksum.
		return nil, &RejectedError{File: path, Errs: []error{err}, Bytes: in.Size(), Format: opened.Format, Source: opened.Source}
	}
	return l, nil
}

// readRest fills in rej what is known of the file in, reading the rest of
// it for its checksum.
func readRest(in *infile.File, rej *RejectedError) *RejectedError {
	rej.Bytes, rej.SHA256 = in.Size(), in.Checksum()
	return rej
}

// collectErrors keeps reading after the first bad record to list the others.
func collectErrors(path string, rd formats.Reader, first error) *RejectedError {
	rej := &RejectedError{File: path, Errs: []error{first}}
	var pe *formats.ParseError
	if !errors.As(first, &pe) {
		return rej // final: the reader cannot go on
	}
	for {
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return rej
		}
		if err == nil && rec.Kind != formats.Skip {
			err = formats.Check(&rec)
		}
		if err == nil {
			continue
		}
		if len(rej.Errs) == maxReportedErrors {
			rej.Truncated = true
			return rej
		}
		rej.Errs = append(rej.Errs, err)
		if !errors.As(err, &pe) {
			return rej
		}
	}
}

// reject records the file that load refused with err as a rejected run of
// kind (ingest or statement), so that the refusal shows in the run history,
// and returns the run's id. source is the caller's, or else the format's
// default. When err is not a rejection it writes nothing and returns 0.
func reject(ctx context.Context, conn *pgx.Conn, tenant, kind, source string, err error) (int64, error) {
	var rej *RejectedError
	if !errors.As(err, &rej) {
		return 0, nil
	}
	if source == "" {
		source = rej.Source
	}
	run := runs.Run{Kind: kind, Format: rej.Format, Source: source, FileName: filepath.Base(rej.File),
		FileBytes: rej.Bytes, FileSHA256: rej.SHA256}
	if rerr := runs.Reject(ctx, conn, tenant, &run, rej.Reasons()); rerr != nil {
		// A database failure, not the file's: the command stops on it.
		return 0, fmt.Errorf("ingest: %s was rejected, and the rejection could not be recorded: %w", rej.File, rerr)
	}
	return run.ID, nil
}

// logWarnings tells the operator, once per file, what the file breaks that
// no money depends on; the run keeps the list.
func logWarnings(log *slog.Logger, file string, warnings []string) {
	if len(warnings) == 0 {
		return
	}
	log.Warn("the file breaks its format where no key, amount or date depends on it: it was read all the same; 'clearing runs show RUN' lists every warning",
		slog.String("file", file), slog.Int("warnings", len(warnings)), slog.String("first", warnings[0]))
}
