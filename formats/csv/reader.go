package csv

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/pii"
)

// DefaultMaxFileBytes bounds a CSV file when Options.MaxFileBytes is zero. It
// is far above a day's settlement export (a million rows is about 100 MB) and
// far below what would fill a disk.
const DefaultMaxFileBytes int64 = 16 << 30

// bufferBytes is the read buffer, and so the window in which the delimiter is
// detected from the header line.
const bufferBytes = 64 << 10

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// Options are what a Reader needs besides the mapping.
type Options struct {
	// FileID names the file in keys of mappings without key columns and in
	// the keys of skipped rows: the file's base name unless the caller
	// overrides it (--file-id). Required. Never a checksum: a corrected
	// re-upload must keep the keys of the rows it still has.
	FileID string
	// Hasher turns account values into keyed hashes; required when the
	// mapping names account columns.
	Hasher pii.Hasher
	// Limits bound each row (MaxLineBytes, all of a row's physical lines
	// together) and the rows in a file (MaxRecords).
	Limits formats.Limits
	// MaxFileBytes bounds the file; zero means DefaultMaxFileBytes.
	MaxFileBytes int64
}

// Reader yields the Records of one CSV file, one row at a time, in constant
// memory. It implements formats.Reader.
type Reader struct {
	sc     *scanner
	plan   *plan
	m      *Mapping
	opts   Options
	limits formats.Limits
	rows   int64
	err    error // final error, returned again by every later call
}

// NewReader reads the file's preamble (skip_lines) and header, detects the
// delimiter when the mapping does not name it, and checks the mapping against
// the header. Every error it returns is final and names the line it is about.
func NewReader(r io.Reader, m *Mapping, opts Options) (*Reader, error) {
	if m == nil {
		return nil, fmt.Errorf("%w: no mapping", ErrMapping)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if err := checkOptions(m, &opts); err != nil {
		return nil, err
	}
	rd := &Reader{m: m, opts: opts, limits: opts.Limits.WithDefaults()}
	br := bufio.NewReaderSize(r, bufferBytes)
	rd.sc = newScanner(br, 0, rd.limits.MaxLineBytes, opts.MaxFileBytes)
	if err := rd.sc.skipEncodingMark(); err != nil {
		return nil, err
	}
	if err := rd.sc.skipLines(m.SkipLines); err != nil {
		return nil, err
	}
	comma, err := rd.delimiter(br)
	if err != nil {
		return nil, err
	}
	rd.sc.comma = comma
	if !m.HasHeader() {
		rd.plan, err = resolvePositional(m)
		return rd, err
	}
	header, err := rd.sc.next()
	switch {
	case err == io.EOF:
		return nil, fmt.Errorf("%w: line %d: the file ends before its header row", ErrNoHeader, rd.sc.line+1)
	case err != nil:
		var re *rowError
		if errors.As(err, &re) {
			return nil, fmt.Errorf("csv: header (line %d, offset %d): %w", re.line, re.offset, re.err)
		}
		return nil, err
	}
	rd.plan, err = resolveHeader(m, header)
	return rd, err
}

var _ formats.Reader = (*Reader)(nil)

func checkOptions(m *Mapping, opts *Options) error {
	id := opts.FileID
	if strings.TrimSpace(id) == "" || len(id) > 255 || !utf8.ValidString(id) || strings.ContainsFunc(id, unicode.IsControl) {
		return fmt.Errorf("%w: the file id %q must be 1 to 255 printable characters (the file's base name by default)", ErrOptions, id)
	}
	if len(m.Account) > 0 && opts.Hasher.IsZero() {
		return fmt.Errorf("%w: the mapping names account columns but no Hasher is set", ErrOptions)
	}
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	return nil
}

// skipEncodingMark consumes a UTF-8 byte order mark, which spreadsheet
// programs write, and rejects UTF-16, which they also write ("Unicode text")
// and which no byte-oriented parse can read.
func (s *scanner) skipEncodingMark() error {
	head, _ := s.br.Peek(3)
	switch {
	case bytes.HasPrefix(head, utf8BOM):
		n, _ := s.br.Discard(len(utf8BOM))
		s.offset += int64(n)
	case bytes.HasPrefix(head, []byte{0xFF, 0xFE}), bytes.HasPrefix(head, []byte{0xFE, 0xFF}):
		return fmt.Errorf("%w: line 1, offset 0: the file starts with a UTF-16 byte order mark; export it as UTF-8", ErrEncoding)
	}
	return nil
}

// delimiter returns the mapping's delimiter or detects it from the header
// line.
func (rd *Reader) delimiter(br *bufio.Reader) (byte, error) {
	if rd.m.Delimiter != "" {
		return delimiterByte(rd.m.Delimiter)
	}
	window, err := br.Peek(br.Size())
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return 0, err
	}
	if len(bytes.TrimLeft(window, "\r\n")) == 0 && err != nil {
		// An empty file: there is no header to detect from, and without a
		// header there are no rows, so any delimiter reads them.
		if rd.m.HasHeader() {
			return 0, fmt.Errorf("%w: line %d: the file ends before its header row", ErrNoHeader, rd.sc.line+1)
		}
		return ',', nil
	}
	c, why := detectDelimiter(window, err == nil)
	if why != "" {
		return 0, fmt.Errorf("%w: line %d: %s; set delimiter in the mapping", ErrDelimiter, rd.sc.line+1, why)
	}
	return c, nil
}

// candidates are the delimiters that detection chooses among.
var candidates = []byte{',', ';', '\t', '|'}

// detectDelimiter counts each candidate outside quotes on the first non-blank
// logical line of window. Exactly one candidate may occur; none, or more
// than one, is reported in why. truncated says the window may end mid-line.
func detectDelimiter(window []byte, truncated bool) (comma byte, why string) {
	for len(window) > 0 && (window[0] == '\n' || window[0] == '\r') {
		window = window[1:]
	}
	counts := make(map[byte]int, len(candidates))
	inQuote, ended := false, false
	for _, c := range window {
		if c == '"' {
			inQuote = !inQuote
		} else if c == '\n' && !inQuote {
			ended = true
			break
		} else if !inQuote && bytes.IndexByte(candidates, c) >= 0 {
			counts[c]++
		}
	}
	if !ended && truncated {
		return 0, fmt.Sprintf("the header line is longer than %d bytes", len(window))
	}
	var found []string
	for _, c := range candidates {
		if counts[c] > 0 {
			comma = c
			found = append(found, fmt.Sprintf("%q %d times", string(c), counts[c]))
		}
	}
	switch len(found) {
	case 0:
		return 0, "the header line has none of \",\", \";\", \"\\t\" and \"|\""
	case 1:
		return comma, ""
	default:
		return 0, "the header line is ambiguous: it has " + strings.Join(found, " and ")
	}
}

// Next returns the next record. A *formats.ParseError names one bad row (its
// line, byte offset and column); call Next again to read on. io.EOF ends the
// file. Any other error is final and is returned again by every later call.
func (rd *Reader) Next() (formats.Record, error) {
	if rd.err != nil {
		return formats.Record{}, rd.err
	}
	for {
		rw, err := rd.sc.next()
		if err != nil {
			var re *rowError
			if errors.As(err, &re) {
				if err := rd.count(re.line); err != nil {
					return formats.Record{}, err
				}
				return formats.Record{}, &formats.ParseError{Line: re.line, Offset: re.offset, Field: rd.plan.label(re.column - 1), Err: re.err}
			}
			rd.err = err
			return formats.Record{}, err
		}
		if allBlank(rw.fields) {
			continue
		}
		if err := rd.count(rw.line); err != nil {
			return formats.Record{}, err
		}
		rec, col, err := rd.convert(rw)
		if err != nil {
			return formats.Record{}, &formats.ParseError{Line: rw.line, Offset: rw.offset, Field: rd.plan.label(col), Err: err}
		}
		return rec, nil
	}
}

// count enforces Limits.MaxRecords over every row, good or bad.
func (rd *Reader) count(line int64) error {
	rd.rows++
	if rd.rows > rd.limits.MaxRecords {
		rd.err = fmt.Errorf("%w: line %d: more than %d rows", formats.ErrTooLarge, line, rd.limits.MaxRecords)
		return rd.err
	}
	return nil
}

// allBlank reports a row of empty cells (",,,"), which spreadsheets write for
// an empty line and which carries nothing to post.
func allBlank(fields []string) bool {
	for _, f := range fields {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}
