package ach

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/clearing-dev/clearing/formats"
)

// chunk is the text of one record as it appears in the file, before padding.
//
// The scanner cuts the input the way moov-io/ach's Reader does: a record ends
// at a line break or after 94 characters, whichever comes first. That one
// rule reads ordinary files, files whose lines carry trailing spaces (the
// spaces form a blank chunk, which is skipped), files whose trailing spaces
// were trimmed (short chunks, padded later), and files written without any
// line break (records back to back).
type chunk struct {
	text  []byte // the record's bytes, without the line break
	runes int    // characters in text
	line  int64  // 1-based physical line of the first byte
	off   int64  // byte offset of the first byte
	first bool   // the chunk starts its physical line
	// bad is the offset of the first byte that is not printable text, or -1.
	bad int64
}

// blank reports whether the chunk holds nothing but spaces.
func (c *chunk) blank() bool {
	for _, b := range c.text {
		if b != ' ' {
			return false
		}
	}
	return true
}

// scanner splits the input into chunks. It holds one chunk at a time, so its
// memory does not depend on the size of the file or of a line.
type scanner struct {
	br      *bufio.Reader
	maxLine int64
	line    int64 // physical line of the next byte
	col     int64 // bytes already read on the current physical line
	off     int64 // offset of the next byte
	buf     []byte
	started bool
}

func newScanner(r io.Reader, maxLine int) *scanner {
	return &scanner{
		br:      bufio.NewReaderSize(r, 64<<10),
		maxLine: int64(maxLine),
		line:    1,
		buf:     make([]byte, 0, 4*recordLength),
	}
}

// errLineTooLong is returned as the cause of a ParseError when a physical
// line exceeds the limit; the reader treats it as final.
var errLineTooLong = errors.New("line too long")

// next returns the next chunk, or io.EOF after the last one. A line longer
// than the limit is a *formats.ParseError wrapping formats.ErrTooLarge; any
// other error comes from the underlying reader.
func (s *scanner) next() (chunk, error) {
	if !s.started {
		s.started = true
		if err := s.skipBOM(); err != nil {
			return chunk{}, err
		}
	}
	if c, ok := s.fast(); ok {
		return c, nil
	}
	return s.slow()
}

// skipBOM drops a UTF-8 byte order mark at the start of the input. Offsets
// still count its three bytes.
func (s *scanner) skipBOM() error {
	p, err := s.br.Peek(3)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return err
	}
	if len(p) == 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf {
		_, _ = s.br.Discard(3)
		s.off += 3
	}
	return nil
}

// fast handles the common case without a per-byte loop: a line of exactly 94
// printable ASCII characters followed by LF or CRLF.
func (s *scanner) fast() (chunk, bool) {
	if s.col != 0 {
		return chunk{}, false
	}
	p, _ := s.br.Peek(recordLength + 2)
	if len(p) < recordLength+1 || !printableASCII(p[:recordLength]) {
		return chunk{}, false
	}
	n := 0
	switch {
	case p[recordLength] == '\n':
		n = recordLength + 1
	case p[recordLength] == '\r' && len(p) == recordLength+2 && p[recordLength+1] == '\n':
		n = recordLength + 2
	default:
		return chunk{}, false
	}
	if s.maxLine < recordLength {
		return chunk{}, false // let the slow path report the limit
	}
	s.buf = append(s.buf[:0], p[:recordLength]...)
	c := chunk{text: s.buf, runes: recordLength, line: s.line, off: s.off, first: true, bad: -1}
	_, _ = s.br.Discard(n)
	s.off += int64(n)
	s.line++
	return c, true
}

// slow reads byte by byte until a line break or a full record.
func (s *scanner) slow() (chunk, error) {
	s.buf = s.buf[:0]
	c := chunk{line: s.line, off: s.off, first: s.col == 0, bad: -1}
	// need is how many continuation bytes the last UTF-8 lead byte
	// announced. A continuation byte that none announced is a character of
	// its own (a Windows-1252 quote is one byte in 0x80-0x9f), so that such
	// a record still counts 94 characters.
	need := 0
	for {
		b, err := s.br.ReadByte()
		if errors.Is(err, io.EOF) {
			return s.finish(c, io.EOF)
		}
		if err != nil {
			return chunk{}, err
		}
		if b == '\n' || b == '\r' {
			if b == '\r' {
				if p, _ := s.br.Peek(1); len(p) == 1 && p[0] == '\n' {
					_, _ = s.br.Discard(1)
					s.off++
				}
			}
			s.off++
			s.line++
			s.col = 0
			need = 0
			if len(s.buf) > 0 {
				return s.finish(c, nil)
			}
			c = chunk{line: s.line, off: s.off, first: true, bad: -1}
			continue
		}
		// A record is 94 characters of at most 4 bytes each; the byte cap
		// ends a chunk of invalid UTF-8 that never completes a character.
		cont := isContinuation(b) && need > 0
		if (c.runes == recordLength && !cont) || len(s.buf) >= 4*recordLength {
			_ = s.br.UnreadByte()
			return s.finish(c, nil)
		}
		s.col++
		if s.col > s.maxLine {
			return chunk{}, &formats.ParseError{Line: s.line, Offset: c.off,
				Err: fmt.Errorf("%w: %w: line longer than %d bytes", formats.ErrTooLarge, errLineTooLong, s.maxLine)}
		}
		// NACHA records are ASCII. A byte outside printable ASCII, even in
		// well-formed UTF-8, means the file is not what it claims to be, or
		// went through a conversion that may have moved more than names.
		if (b < 0x20 || b >= 0x7f) && c.bad < 0 {
			c.bad = s.off
		}
		switch {
		case cont:
			need--
		case b >= 0xc0 && b < 0xe0:
			need = 1
		case b >= 0xe0 && b < 0xf0:
			need = 2
		case b >= 0xf0 && b < 0xf8:
			need = 3
		default:
			need = 0
		}
		if !cont {
			c.runes++
		}
		s.buf = append(s.buf, b)
		s.off++
	}
}

// finish completes a chunk, or returns eof when the chunk is empty and the
// input has ended. (Any byte that could make the chunk invalid UTF-8 is
// outside printable ASCII and has already marked it bad.)
func (s *scanner) finish(c chunk, eof error) (chunk, error) {
	if len(s.buf) == 0 {
		return chunk{}, eof
	}
	c.text = s.buf
	return c, nil
}

// isContinuation reports whether b continues a multi-byte UTF-8 sequence.
func isContinuation(b byte) bool { return b&0xc0 == 0x80 }
