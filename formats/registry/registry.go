package ingest

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/formats/csv"
)

// ReaderOptions are the format-specific settings of an ingest.
type ReaderOptions struct {
	ISOFraming string // ISO 8583 framing; empty detects it
	ISOSpec    string // ISO 8583 spec name or JSON path; empty takes the default
	CSVMap     string // CSV mapping file or preset (required for CSV)
	FileID     string // CSV file id for line keys; empty takes the file's base name
	// Open, when set, replaces the format's reader. Tests use it to feed
	// records that no file format can express.
	Open func(r io.Reader) (formats.Reader, error)
}

// Formats lists the formats ingest reads.
var Formats = []string{"ach", "iso8583", "csv"}

// openReader builds the reader for o.Format, detecting the format first
// when it is empty, and settles the source's default.
func openReader(in *input, path string, o *Options) (formats.Reader, error) {
	if o.Reader.Open != nil {
		if o.Source == "" {
			o.Source = o.Format
		}
		return o.Reader.Open(in)
	}
	if o.Format == "" {
		f, err := detect(in, path, o)
		if err != nil {
			return nil, err
		}
		o.Format = f
	}
	switch o.Format {
	case "csv":
		return openCSV(in, path, o)
	default:
		return nil, fmt.Errorf("%w %q: use --format %s", ErrUnknownFormat, o.Format, strings.Join(Formats, "|"))
	}
}

func openCSV(in *input, path string, o *Options) (formats.Reader, error) {
	if o.Reader.CSVMap == "" {
		return nil, fmt.Errorf("csv needs a column mapping: --map FILE or --map preset:NAME (presets: %s)",
			strings.Join(csv.Presets(), ", "))
	}
	m, err := csv.LoadMapping(o.Reader.CSVMap)
	if err != nil {
		return nil, err
	}
	if o.Source == "" {
		o.Source = m.Source
	}
	fileID := o.Reader.FileID
	if fileID == "" {
		fileID = filepath.Base(path)
	}
	return csv.NewReader(in, m, csv.Options{FileID: fileID, Hasher: o.Hasher})
}

// detect tells the format from the first bytes of the file: an ACH file
// starts with a 94-character file header record "101". CSV needs its
// mapping, which --map gives; anything else must be named.
func detect(in *input, path string, o *Options) (string, error) {
	if o.Reader.CSVMap != "" {
		return "csv", nil
	}
	head, err := peek(in, 128)
	if err != nil {
		return "", err
	}
	line, _, _ := bytes.Cut(head, []byte("\n"))
	line = bytes.TrimRight(line, "\r ")
	if bytes.HasPrefix(line, []byte("101")) && len(line) >= 90 {
		return "ach", nil
	}
	return "", fmt.Errorf("%w: %s does not look like a NACHA ACH file; name its format with --format %s",
		ErrUnknownFormat, path, strings.Join(Formats, "|"))
}

// peek returns up to n bytes from the front of in without consuming them
// from the point of view of later readers.
func peek(in *input, n int) ([]byte, error) {
	buf := make([]byte, n)
	k, err := io.ReadFull(in.r, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	buf = buf[:k]
	in.r = io.MultiReader(bytes.NewReader(buf), in.r)
	return buf, nil
}

// checkRecord asserts the Record contract on what a format produced, so a
// reader bug stops the file instead of reaching the ledger.
func checkRecord(r *formats.Record) error {
	bad := func(what string) error {
		return &formats.ParseError{Line: r.Line, Offset: r.Offset, Err: fmt.Errorf("record %q: %s", r.Key, what)}
	}
	switch {
	case r.Key == "":
		return bad("no key")
	case len(r.Key) > 512:
		return bad("key longer than 512 bytes")
	case r.Amount < 0:
		return bad("negative amount")
	case r.Kind != formats.Notice && r.Amount == 0:
		return bad("zero amount on a record that posts")
	case len(r.Currency) != 3:
		return bad("currency is not a 3-letter ISO 4217 code")
	case r.Direction != formats.Credit && r.Direction != formats.Debit:
		return bad("direction is neither credit nor debit")
	case r.ValueDate.IsZero():
		return bad("no value date")
	}
	switch r.Kind {
	case formats.Clearing, formats.Notice:
	case formats.Return, formats.Reversal:
		if r.Link == nil || r.Link.Reference == "" || !strings.HasPrefix(r.Link.Suffix, ":") {
			return bad("return or reversal without a usable link to its original")
		}
	default:
		return bad(fmt.Sprintf("unknown kind %q", r.Kind))
	}
	return nil
}
