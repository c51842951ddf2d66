package bai2

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/clearing-dev/clearing/formats"
)

// physical is one physical record's share of a logical record.
type physical struct {
	start  int   // where its fields begin in logical.content
	line   int64 // 1-based line number
	offset int64 // byte offset of the line's first byte
}

// logical is a physical record with the 88 continuations that follow it.
// Its content is the fields of all of them, after their record codes, joined
// with commas: a continuation's first field is the next field of the record
// it continues, so "03,...,190/" followed by "88,500000,,/" reads as
// "...,190,500000,,".
type logical struct {
	code    string
	content []byte
	parts   []physical
	n       int64 // physical records, which may exceed len(parts) when too large
	// problem is the first syntax problem found while assembling; the
	// fields are still usable, so the record is processed after reporting.
	problem *formats.ParseError
}

// at returns the physical record that holds content position pos.
func (l *logical) at(pos int) physical {
	p := l.parts[0]
	for _, q := range l.parts[1:] {
		if q.start > pos {
			break
		}
		p = q
	}
	return p
}

// errAt builds the ParseError for a field that starts at content position pos.
func (l *logical) errAt(pos int, field string, err error) *formats.ParseError {
	p := l.at(pos)
	return &formats.ParseError{Line: p.line, Offset: p.offset, Field: field, Err: err}
}

// textual reports whether the record's last field is free text, which may
// hold commas and slashes and need not end with a slash.
func (l *logical) textual() bool { return l.code == "16" }

// scanner reads physical lines with a bounded buffer and assembles them into
// logical records. It keeps one line of lookahead, because only the next
// line tells whether the current record is continued.
type scanner struct {
	br      *bufio.Reader
	maxLine int
	maxRec  int
	line    int64 // lines consumed
	offset  int64 // bytes consumed
	pending []byte
	pendOK  bool
	pendLn  int64
	pendOff int64
	eof     bool
	rec     logical
	// rest is what follows the first record on the last physical line,
	// when it holds several (restLn, restOff say where); split is set once
	// that has happened, for the reader's warning.
	rest            []byte
	restLn, restOff int64
	split           bool
	first           []byte
	// joined is set once a detail's text ran onto a line without a record
	// code.
	joined bool
	closed bool // the last physical record ended with a slash
}

// errNoSlash is the problem of a record without its closing slash, which is
// a warning on the file trailer (99) and an error elsewhere.
var errNoSlash = fmt.Errorf("%w: record has no closing slash", ErrSyntax)

// errLineTooLong is reported as a ParseError wrapping formats.ErrTooLarge;
// the reader cannot find the next record boundary after it and stops.
var errLineTooLong = fmt.Errorf("%w: line longer than the limit", formats.ErrTooLarge)

func newScanner(r io.Reader, maxLine, maxRec int) *scanner {
	size := maxLine + 2 // room for "\r\n"
	if size < 16 {
		size = 16
	}
	return &scanner{br: bufio.NewReaderSize(r, size), maxLine: maxLine, maxRec: maxRec}
}

// readLine returns the next physical record: a non-blank line without its
// line ending, or one of several slash-terminated records that share a line
// (see splitRecord), with its line number and offset. The slice is valid
// until the next call.
func (s *scanner) readLine() ([]byte, int64, int64, error) {
	if len(s.rest) > 0 {
		return s.cut(s.rest, s.restLn, s.restOff)
	}
	line, ln, off, err := s.readPhysical()
	if err != nil {
		return line, ln, off, err
	}
	return s.cut(line, ln, off)
}

// cut returns the first record of line and keeps the others for the next
// call.
func (s *scanner) cut(line []byte, ln, off int64) ([]byte, int64, int64, error) {
	first, next := splitRecord(line)
	if next > 0 {
		// first and line may alias rest, which is about to be rewritten.
		s.first = append(s.first[:0], first...)
		first = s.first
	}
	s.rest = s.rest[:0]
	if next > 0 {
		s.split = true
		s.rest = append(s.rest, line[next:]...)
		s.restLn, s.restOff = ln, off+int64(next)
	}
	return first, ln, off, nil
}

// splitRecord finds where a second record starts on a line: after a slash
// that is followed by spaces and a known record code with its comma ("...
// PPD/ 16,142,..." or "2/   02,..."). A record that is not free text may
// also be followed at once ("/02,"). It returns the first record and the
// start of the next, or 0 when the line holds one record. A free-text field
// keeps a slash that spaces do not follow, as in "08/18/23".
func splitRecord(line []byte) ([]byte, int) {
	textual := bytes.HasPrefix(line, []byte("16,")) || bytes.HasPrefix(line, []byte("88,"))
	for i := bytes.IndexByte(line, '/'); i >= 0; {
		j := i + 1
		for j < len(line) && (line[j] == ' ' || line[j] == '\t') {
			j++
		}
		if (j > i+1 || !textual) && j+2 < len(line) && line[j+2] == ',' && knownCode(string(line[j:j+2])) {
			return line[:i+1], j
		}
		k := bytes.IndexByte(line[i+1:], '/')
		if k < 0 {
			break
		}
		i += k + 1
	}
	return line, 0
}

// readPhysical returns the next non-blank physical line.
func (s *scanner) readPhysical() ([]byte, int64, int64, error) {
	for {
		if s.eof {
			return nil, 0, 0, io.EOF
		}
		raw, err := s.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, s.line + 1, s.offset, &formats.ParseError{Line: s.line + 1, Offset: s.offset, Err: errLineTooLong}
		}
		if err == io.EOF {
			s.eof = true
			if len(raw) == 0 {
				return nil, 0, 0, io.EOF
			}
		} else if err != nil {
			return nil, 0, 0, fmt.Errorf("bai2: reading line %d: %w", s.line+1, err)
		}
		off := s.offset
		s.line++
		s.offset += int64(len(raw))
		line := bytes.TrimRight(raw, "\r\n")
		if off == 0 {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
		}
		if len(line) > s.maxLine {
			return nil, s.line, off, &formats.ParseError{Line: s.line, Offset: off, Err: errLineTooLong}
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		return line, s.line, off, nil
	}
}

// next returns the next logical record, io.EOF at the end, a *ParseError
// for an over-long line, or an I/O error.
func (s *scanner) next() (*logical, error) {
	var first []byte
	var ln, off int64
	if s.pendOK {
		first, ln, off = s.pending, s.pendLn, s.pendOff
		s.pendOK = false
	} else {
		l, n, o, err := s.readLine()
		if err != nil {
			return nil, err
		}
		first, ln, off = l, n, o
	}
	r := &s.rec
	r.content, r.parts, r.n, r.problem = r.content[:0], r.parts[:0], 0, nil
	r.code = recordCode(first)
	s.add(first, ln, off)
	for {
		l, n, o, err := s.readLine()
		if err == io.EOF {
			return r, nil
		}
		if err != nil {
			return nil, err
		}
		if recordCode(l) == "" && r.textual() && !s.closed {
			// The text of a detail that was not closed with a slash runs
			// onto the next line without an 88 record code: part of the
			// same physical record, and counted with it.
			s.joined = true
			r.content = append(r.content, l...)
			s.closed = bytes.HasSuffix(bytes.TrimRight(l, " "), []byte("/"))
			if s.closed {
				r.content = bytes.TrimSuffix(bytes.TrimRight(r.content, " "), []byte("/"))
			}
			continue
		}
		if recordCode(l) != "88" {
			s.pending = append(s.pending[:0], l...)
			s.pendOK, s.pendLn, s.pendOff = true, n, o
			return r, nil
		}
		s.add(l, n, o)
	}
}

// recordCode returns the two-digit record code of a line, or "" when the
// line does not start with one followed by a comma or slash.
func recordCode(line []byte) string {
	if len(line) < 2 || !isDigit(line[0]) || !isDigit(line[1]) {
		return ""
	}
	if len(line) > 2 && line[2] != ',' && line[2] != '/' {
		return ""
	}
	switch string(line[:2]) { // constant strings, so no allocation
	case "01":
		return "01"
	case "02":
		return "02"
	case "03":
		return "03"
	case "16":
		return "16"
	case "49":
		return "49"
	case "88":
		return "88"
	case "98":
		return "98"
	case "99":
		return "99"
	}
	return string(line[:2])
}

// add appends one physical line's fields to the current logical record.
func (s *scanner) add(line []byte, ln, off int64) {
	r := &s.rec
	r.n++
	s.closed = bytes.HasSuffix(bytes.TrimRight(line, " \t"), []byte("/"))
	body, problem := recordBody(line, r.textual())
	if problem != nil && r.problem == nil {
		r.problem = &formats.ParseError{Line: ln, Offset: off, Err: problem}
	}
	if len(r.content)+len(body)+1 > s.maxRec {
		if r.problem == nil {
			r.problem = &formats.ParseError{Line: ln, Offset: off,
				Err: fmt.Errorf("%w: record with its continuations longer than %d bytes", formats.ErrTooLarge, s.maxRec)}
		}
		return
	}
	if len(r.parts) > 0 {
		r.content = append(r.content, ',')
	}
	r.parts = append(r.parts, physical{start: len(r.content), line: ln, offset: off})
	r.content = append(r.content, body...)
}

// recordBody returns the fields of a physical line after its record code.
// A record ends with a slash; what follows it must be blank. The text field
// of a transaction detail may itself contain slashes and need not be closed,
// so there only one trailing slash is removed.
func recordBody(line []byte, textual bool) ([]byte, error) {
	line = bytes.TrimRight(line, " \t")
	if len(line) < 3 {
		if textual {
			return nil, nil
		}
		return nil, fmt.Errorf("%w: record has no closing slash", ErrSyntax)
	}
	if line[2] == '/' {
		line = line[2:]
	} else {
		line = line[3:]
	}
	if textual {
		return bytes.TrimSuffix(line, []byte("/")), nil
	}
	i := bytes.IndexByte(line, '/')
	if i < 0 {
		return line, errNoSlash
	}
	if i != len(line)-1 {
		return line[:i], fmt.Errorf("%w: data after the closing slash", ErrSyntax)
	}
	return line[:i], nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
