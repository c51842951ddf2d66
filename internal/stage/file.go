package stage

import (
	"context"
	"errors"
	"io"
	"path/filepath"

	"github.com/jackc/pgx/v5"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/formats/registry"
	"github.com/clearing-dev/clearing/internal/infile"
)

// Loaded is a file parsed, validated and staged.
type Loaded struct {
	*Stage
	Format  string
	Source  string // the format's default source
	Name    string // the file's base name
	Bytes   int64
	SHA256  []byte
	Records int64 // every record read, skipped ones included
	Skipped int64
	// PositionalKeys: see registry.Opened.
	PositionalKeys bool
}

// LoadFile parses the whole file at path into a new stage on conn. Any bad
// record rejects the file with a *RejectedError; parsing goes on past the
// first to report up to maxReportedErrors. Nothing outside the connection's
// temporary stage is written.
func LoadFile(ctx context.Context, conn *pgx.Conn, path string, maxBytes int64, ro registry.Options) (*Loaded, error) {
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
	stg, err := New(ctx, conn)
	if err != nil {
		return nil, err
	}
	l := &Loaded{Stage: stg, Format: opened.Format, Source: opened.Source, Name: filepath.Base(path), Bytes: in.Size(),
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
