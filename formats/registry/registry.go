// Package registry is the switch from a format's name to its reader: Open
// builds the reader for the named format, or detects the format from the
// file's first bytes when none is named, and refuses formats the caller does
// not allow. Nothing registers itself here; a new format is a new case in
// Open (and in detect when its first bytes tell it apart). Ingest and
// statement import both open files through it, so the two sides of a
// reconciliation are parsed by the same code. The Record contract that every
// reader must keep is checked by formats.Check, next to Record.
package registry

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/formats/ach"
	"github.com/clearing-dev/clearing/formats/bai2"
	"github.com/clearing-dev/clearing/formats/csv"
	"github.com/clearing-dev/clearing/formats/iso8583"
	"github.com/clearing-dev/clearing/internal/pii"
)

// ErrUnknownFormat means the format could not be told from the file and was
// not named, or was named but is not one this command reads.
var ErrUnknownFormat = errors.New("registry: unknown format")

// The format names.
const (
	ACH     = "ach"
	ISO8583 = "iso8583"
	CSV     = "csv"
	BAI2    = "bai2"
)

// Input is a file being read: its bytes, and a look at the first of them.
type Input interface {
	io.Reader
	Peek(n int) ([]byte, error)
}

// Options say how to read a file.
type Options struct {
	// Format is one of Allowed; empty detects it.
	Format string
	// Allowed lists the formats the caller accepts.
	Allowed []string
	Hasher  pii.Hasher
	// ISO 8583: the framing (empty detects it) and the spec (empty takes
	// the default).
	ISOFraming, ISOSpec string
	// CSV: the mapping file or preset, and the file id for line keys (empty
	// takes the file's base name).
	CSVMap, FileID string
	// Open, when set, replaces the format's reader. Tests use it to feed
	// records that no file format can express.
	Open func(r io.Reader) (formats.Reader, error)
}

// Opened is a reader and what opening it settled.
type Opened struct {
	Reader formats.Reader
	Format string
	// Source is the format's default source: "ach", "iso8583", "bai2", or
	// the CSV mapping's source.
	Source string
	// PositionalKeys says the keys come from the file's name and line
	// numbers (a CSV mapping without key columns), so that a record's key
	// changes when an earlier line is added or removed.
	PositionalKeys bool
}

// Open builds the reader for the file at path.
func Open(in Input, path string, o Options) (Opened, error) {
	if o.Open != nil {
		r, err := o.Open(in)
		return Opened{Reader: r, Format: o.Format, Source: o.Format}, err
	}
	format := o.Format
	if format == "" {
		f, err := detect(in, path, o)
		if err != nil {
			return Opened{}, err
		}
		format = f
	}
	allowed := false
	for _, a := range o.Allowed {
		allowed = allowed || a == format
	}
	if !allowed {
		return Opened{}, fmt.Errorf("%w %q here: use --format %s", ErrUnknownFormat, format, strings.Join(o.Allowed, "|"))
	}
	switch format {
	case ACH:
		return Opened{Reader: ach.NewReader(in, ach.Options{Hasher: o.Hasher}), Format: ACH, Source: ACH}, nil
	case CSV:
		return openCSV(in, path, o)
	case BAI2:
		return Opened{Reader: bai2.NewReader(in, bai2.Options{Hasher: o.Hasher}), Format: BAI2, Source: BAI2}, nil
	case ISO8583:
		r, err := iso8583.NewReader(in, iso8583.Options{Framing: o.ISOFraming, Spec: o.ISOSpec, Hasher: o.Hasher})
		return Opened{Reader: r, Format: ISO8583, Source: ISO8583}, err
	}
	return Opened{}, fmt.Errorf("%w %q", ErrUnknownFormat, format)
}

func openCSV(in Input, path string, o Options) (Opened, error) {
	if o.CSVMap == "" {
		return Opened{}, fmt.Errorf("csv needs a column mapping: --map FILE or --map preset:NAME (presets: %s)",
			strings.Join(csv.Presets(), ", "))
	}
	m, err := csv.LoadMapping(o.CSVMap)
	if err != nil {
		return Opened{}, err
	}
	fileID := o.FileID
	if fileID == "" {
		fileID = filepath.Base(path)
	}
	r, err := csv.NewReader(in, m, csv.Options{FileID: fileID, Hasher: o.Hasher})
	return Opened{Reader: r, Format: CSV, Source: m.Source, PositionalKeys: len(m.Key) == 0}, err
}

// detect tells the format from the first bytes of the file: an ACH file
// starts with a 94-character file header record "101", a BAI2 file with an
// "01," file header. CSV needs its mapping, which --map gives; anything else
// must be named.
func detect(in Input, path string, o Options) (string, error) {
	if o.CSVMap != "" {
		return CSV, nil
	}
	head, err := in.Peek(128)
	if err != nil {
		return "", err
	}
	line, _, _ := bytes.Cut(head, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	switch {
	case bytes.HasPrefix(line, []byte("101")) && len(line) >= 80:
		return ACH, nil
	case bytes.HasPrefix(line, []byte("01,")):
		return BAI2, nil
	}
	return "", fmt.Errorf("%w: %s is neither a NACHA ACH nor a BAI2 file; name its format with --format %s",
		ErrUnknownFormat, path, strings.Join(o.Allowed, "|"))
}
