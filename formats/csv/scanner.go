package csv

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/clearing-dev/clearing/formats"
)

// scanner splits a byte stream into RFC 4180 rows. It follows encoding/csv's
// strict mode (no lazy quotes, no comment lines, empty lines skipped, CRLF
// and a final CR read as line ends, CRLF inside a quoted field read as LF) and
// adds what encoding/csv lacks: the byte offset of each row's first line, a
// bound on a row's total size even when a quoted field runs over many lines,
// and a bound on the file's size.
type scanner struct {
	br      *bufio.Reader
	comma   byte
	maxRow  int   // most raw bytes in one row, line ends included
	maxFile int64 // most bytes in the file
	line    int64 // physical lines consumed
	offset  int64 // bytes consumed
	rowLen  int   // raw bytes of the row being read
	// rowLine and rowOffset locate the row being read, for errors that
	// end the file.
	rowLine, rowOffset int64
	long               []byte
	buf                []byte // the row's unquoted field bytes, end to end
	ends               []int  // where each field ends in buf
	fields             []string
}

// row is one logical CSV row: its fields and where it starts.
type row struct {
	fields []string // valid until the next call to next
	line   int64    // 1-based physical line of the row's first byte
	offset int64    // byte offset of that byte
}

// rowError is a problem confined to one row. The scanner has already moved
// past that row, so the caller can report it and carry on.
type rowError struct {
	line, offset int64
	column       int // 1-based field where the problem is; 0 for the row
	err          error
}

func (e *rowError) Error() string { return e.err.Error() }

func newScanner(br *bufio.Reader, comma byte, maxRow int, maxFile int64) *scanner {
	return &scanner{br: br, comma: comma, maxRow: maxRow, maxFile: maxFile}
}

// tooLarge is the final error for a row or file past its limit. It names the
// row's first line, since the caller cannot continue and has nothing else to
// go on.
func (s *scanner) tooLarge(what string, limit int64) error {
	return fmt.Errorf("%w: line %d (offset %d): %s exceeds %d bytes", formats.ErrTooLarge, s.rowLine, s.rowOffset, what, limit)
}

// startRow notes that the next line begins a row (or a skipped line).
func (s *scanner) startRow() {
	s.rowLen, s.rowLine, s.rowOffset = 0, s.line+1, s.offset
}

// readLine returns the next physical line with its line end normalised to
// "\n" (or none at the end of the file), and counts it. A line is counted when
// it has at least one byte.
func (s *scanner) readLine() ([]byte, error) {
	line, err := s.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		s.long = append(s.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			if s.rowLen+len(s.long) > s.maxRow {
				s.offset += int64(len(s.long))
				return nil, s.tooLarge("row", int64(s.maxRow))
			}
			line, err = s.br.ReadSlice('\n')
			s.long = append(s.long, line...)
		}
		line = s.long
	}
	n := len(line)
	if n > 0 {
		s.line++
	}
	s.rowLen += n
	s.offset += int64(n)
	if s.rowLen > s.maxRow {
		return nil, s.tooLarge("row", int64(s.maxRow))
	}
	if s.offset > s.maxFile {
		return nil, s.tooLarge("file", s.maxFile)
	}
	if n > 0 && err == io.EOF {
		err = nil
		if line[n-1] == '\r' {
			line = line[:n-1]
		}
	}
	if n := len(line); n >= 2 && line[n-2] == '\r' && line[n-1] == '\n' {
		line[n-2] = '\n'
		line = line[:n-1]
	}
	return line, err
}

// skipLines discards n physical lines without parsing them, quotes and all.
// A file shorter than n lines is left at its end, for the caller to find no
// header there.
func (s *scanner) skipLines(n int) error {
	for range n {
		s.startRow()
		if _, err := s.readLine(); err == io.EOF {
			return nil
		} else if err != nil {
			return err
		}
	}
	return nil
}

// lengthNL is 1 when b ends with a line feed.
func lengthNL(b []byte) int {
	if len(b) > 0 && b[len(b)-1] == '\n' {
		return 1
	}
	return 0
}

// next returns the next row. Blank lines are skipped. A *rowError leaves the
// scanner at the line after the bad row; io.EOF ends the file; any other
// error is final.
func (s *scanner) next() (row, error) {
	var line []byte
	for {
		s.startRow()
		var err error
		line, err = s.readLine()
		if err != nil {
			return row{}, err
		}
		if len(line) > lengthNL(line) {
			break
		}
	}
	r := row{line: s.rowLine, offset: s.rowOffset}
	if err := s.parse(line); err != nil {
		var re *rowError
		if errors.As(err, &re) {
			re.line, re.offset = r.line, r.offset
		}
		return row{}, err
	}
	str := string(s.buf)
	s.fields = s.fields[:0]
	prev := 0
	for _, end := range s.ends {
		s.fields = append(s.fields, str[prev:end])
		prev = end
	}
	r.fields = s.fields
	return r, nil
}

// parse splits one row, reading further lines while a quoted field is open.
func (s *scanner) parse(line []byte) error {
	s.buf, s.ends = s.buf[:0], s.ends[:0]
	for {
		if len(line) == 0 || line[0] != '"' {
			i := bytes.IndexByte(line, s.comma)
			field := line
			if i >= 0 {
				field = field[:i]
			} else {
				field = field[:len(field)-lengthNL(field)]
			}
			if bytes.IndexByte(field, '"') >= 0 {
				return s.bad(ErrQuote, "a quote inside an unquoted field; quote the whole field and double the quote")
			}
			s.buf = append(s.buf, field...)
			s.ends = append(s.ends, len(s.buf))
			if i < 0 {
				return nil
			}
			line = line[i+1:]
			continue
		}
		rest, done, err := s.quoted(line[1:])
		if err != nil || done {
			return err
		}
		line = rest
	}
}

// quoted reads one quoted field whose opening quote is already consumed. It
// returns the rest of the line after the field's delimiter, or done when the
// field ended the row.
func (s *scanner) quoted(line []byte) (rest []byte, done bool, err error) {
	for {
		i := bytes.IndexByte(line, '"')
		switch {
		case i >= 0:
			s.buf = append(s.buf, line[:i]...)
			line = line[i+1:]
			switch {
			case len(line) > 0 && line[0] == '"':
				s.buf = append(s.buf, '"')
				line = line[1:]
			case len(line) > 0 && line[0] == s.comma:
				s.ends = append(s.ends, len(s.buf))
				return line[1:], false, nil
			case lengthNL(line) == len(line):
				s.ends = append(s.ends, len(s.buf))
				return nil, true, nil
			default:
				return nil, false, s.bad(ErrQuote, "text after a closing quote; a quote inside a quoted field is written twice")
			}
		case len(line) > 0:
			s.buf = append(s.buf, line...)
			next, rerr := s.readLine()
			if rerr != nil && rerr != io.EOF {
				return nil, false, rerr
			}
			line = next
		default:
			return nil, false, s.bad(ErrQuote, "a quoted field is not closed before the end of the file")
		}
	}
}

// bad builds the row error for the field being parsed.
func (s *scanner) bad(sentinel error, why string) error {
	return &rowError{column: len(s.ends) + 1, err: fmt.Errorf("%w: %s", sentinel, why)}
}
