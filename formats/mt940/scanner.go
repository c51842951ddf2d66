package mt940

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/clearing-dev/clearing/formats"
)

// eventKind is what the scanner found.
type eventKind int8

const (
	evField eventKind = iota // a field: tag and value, continuation lines joined
	evStart                  // a {1:} basic header block: a new message
	evEnd                    // "-}": the end of block 4
	evText                   // a line outside any field
)

// event is one field or boundary.
type event struct {
	kind   eventKind
	tag    string   // "61", "60F", "NS"
	lines  []string // the value's lines: the first after the tag, then continuations
	msgTyp string   // for evStart: the message type of block 2 when given, "940"
	line   int64
	offset int64
}

// value is the field's lines joined without separators: banks wrap values
// at arbitrary places, inside words and references.
func (e *event) value() string { return strings.Join(e.lines, "") }

// scanner reads lines and assembles fields. A field is a line that starts
// with a tag (":61:") and the lines that follow it up to the next tag or
// boundary, so it keeps the field it is assembling until the next one
// starts.
type scanner struct {
	br      *bufio.Reader
	max     int
	line    int64 // lines read so far
	offset  int64 // bytes read so far
	cur     *event
	queue   []event
	eof     bool
	err     *formats.ParseError
	latin1  int64 // lines read as ISO-8859-1
	control int64 // lines with control bytes removed
	firstL1 int64 // first line read as ISO-8859-1
	firstCB int64 // first line with control bytes
}

func newScanner(r io.Reader, maxLine int) *scanner {
	return &scanner{br: bufio.NewReaderSize(r, 64<<10), max: maxLine}
}

// next returns the next event, io.EOF at the end, or a ParseError after
// which nothing more can be read (a line over the limit).
func (s *scanner) next() (event, error) {
	for len(s.queue) == 0 {
		if s.err != nil {
			return event{}, s.err
		}
		if s.eof {
			if s.cur != nil {
				s.queue = append(s.queue, *s.cur)
				s.cur = nil
				continue
			}
			return event{}, io.EOF
		}
		s.readLine()
	}
	ev := s.queue[0]
	s.queue = s.queue[:copy(s.queue, s.queue[1:])]
	return ev, nil
}

// flush ends the field being assembled.
func (s *scanner) flush() {
	if s.cur != nil {
		s.queue = append(s.queue, *s.cur)
		s.cur = nil
	}
}

func (s *scanner) readLine() {
	raw, err := s.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) || len(raw) > s.max {
		s.err = &formats.ParseError{Line: s.line + 1, Offset: s.offset,
			Err: fmt.Errorf("%w: line longer than %d bytes", formats.ErrTooLarge, s.max)}
		return
	}
	if err != nil && err != io.EOF {
		s.err = &formats.ParseError{Line: s.line + 1, Offset: s.offset, Err: err}
		return
	}
	if err == io.EOF {
		s.eof = true
		if len(raw) == 0 {
			return
		}
	}
	s.line++
	line, off := s.line, s.offset
	s.offset += int64(len(raw))
	text := s.decode(raw)
	if line == 1 {
		text = strings.TrimPrefix(text, "\ufeff") // a UTF-8 byte order mark
	}
	// A file with bare CR line ends arrives as one line; its parts are
	// read as lines of their own, all numbered with the physical line.
	for _, part := range strings.Split(text, "\r") {
		s.split(part, line, off)
	}
}

// decode turns a raw line into text: line end removed, ISO-8859-1 when it
// is not UTF-8, control bytes removed.
func (s *scanner) decode(raw []byte) string {
	raw = bytes.TrimRight(raw, "\r\n")
	var text string
	if utf8.Valid(raw) {
		text = string(raw)
	} else {
		if s.latin1 == 0 {
			s.firstL1 = s.line
		}
		s.latin1++
		rs := make([]rune, len(raw))
		for i, b := range raw {
			rs[i] = rune(b)
		}
		text = string(rs)
	}
	if strings.IndexFunc(text, isControl) >= 0 {
		if s.control == 0 {
			s.firstCB = s.line
		}
		s.control++
		text = strings.Map(func(r rune) rune {
			if isControl(r) {
				return -1
			}
			return r
		}, text)
	}
	return text
}

func isControl(r rune) bool { return (r < 0x20 && r != '\t' && r != '\r') || r == 0x7f }

// split handles the block envelope inside a line, then the field syntax.
func (s *scanner) split(text string, line, off int64) {
	for {
		trimmed := strings.TrimSpace(text)
		switch {
		case strings.HasPrefix(trimmed, "{"):
			rest, ok := s.blocks(trimmed, line, off)
			if !ok {
				return
			}
			text = rest
			if strings.TrimSpace(text) == "" {
				return
			}
			continue
		case strings.HasPrefix(trimmed, "-}"):
			s.flush()
			s.queue = append(s.queue, event{kind: evEnd, line: line, offset: off})
			text = trimmed[2:]
			if strings.TrimSpace(text) == "" {
				return
			}
			continue
		}
		s.fieldLine(text, line, off)
		return
	}
}

// blocks reads {n:...} blocks at the start of a line. Block 4 opens the
// text, whose fields follow; blocks 1, 2, 3 and 5 are skipped, noting the
// message type of block 2. It returns what follows "{4:".
func (s *scanner) blocks(t string, line, off int64) (string, bool) {
	for strings.HasPrefix(t, "{") {
		if strings.HasPrefix(t, "{4:") {
			return t[3:], true
		}
		if strings.HasPrefix(t, "{1:") {
			s.flush()
			s.queue = append(s.queue, event{kind: evStart, line: line, offset: off, msgTyp: "940"})
		}
		depth, end := 0, -1
		for i := 0; i < len(t) && end < 0; i++ {
			switch t[i] {
			case '{':
				depth++
			case '}':
				if depth--; depth == 0 {
					end = i
				}
			}
		}
		if end < 0 {
			return "", false // a block wrapped over lines: rare, and holds no field
		}
		if strings.HasPrefix(t, "{2:") && len(t) >= 7 {
			if typ := t[4:7]; typ == "940" || typ == "942" {
				for i := len(s.queue) - 1; i >= 0; i-- {
					if s.queue[i].kind == evStart {
						s.queue[i].msgTyp = typ
						break
					}
				}
			}
		}
		t = strings.TrimSpace(t[end+1:])
	}
	return t, true
}

// fieldLine starts a field at a tag line, or continues the current one.
func (s *scanner) fieldLine(text string, line, off int64) {
	// Some files indent their fields; a tag is recognised after blanks.
	if tag, value, ok := cutTag(strings.TrimLeft(text, " \t")); ok {
		s.flush()
		s.cur = &event{kind: evField, tag: tag, lines: []string{value}, line: line, offset: off}
		return
	}
	if s.cur == nil {
		if t := strings.TrimSpace(text); t != "" && t != "-" && t != "}" {
			s.queue = append(s.queue, event{kind: evText, lines: []string{text}, line: line, offset: off})
		}
		return
	}
	if t := strings.TrimSpace(text); t == "-" || t == "}" {
		// Free text (:86:) is wrapped at arbitrary places, even onto a
		// line that holds only the "-" of a word: no content, and the
		// field goes on. After any other field a "-" ends the message,
		// and what follows until the next tag (ABN AMRO's "ABNANL2A" and
		// "940" header lines) is outside any field, not part of a balance.
		if s.cur.tag != "86" {
			s.flush()
		}
		return
	}
	size := 0
	for _, l := range s.cur.lines {
		size += len(l)
	}
	if size+len(text) <= maxFieldBytes {
		s.cur.lines = append(s.cur.lines, text)
	}
}

// cutTag recognises ":61:", ":60F:", ":NS:" and the like at the start of a
// line: two digits and an optional letter, or NS.
func cutTag(text string) (tag, value string, ok bool) {
	if len(text) < 4 || text[0] != ':' {
		return "", "", false
	}
	end := strings.IndexByte(text[1:], ':')
	if end < 2 || end > 3 {
		return "", "", false
	}
	tag = text[1 : 1+end]
	if tag != "NS" && !(isDigit(tag[0]) && isDigit(tag[1]) && (len(tag) == 2 || tag[2] >= 'A' && tag[2] <= 'Z')) {
		return "", "", false
	}
	return tag, text[2+end:], true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
