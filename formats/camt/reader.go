package camt

import (
	"bufio"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/clearing-dev/clearing/formats"
)

// phase is where the reader stands in the document:
// Document > message > (GrpHdr, statement*) .
type phase int8

const (
	beforeRoot phase = iota
	inRoot
	inMessage
	inStatement
	afterRoot
)

// message describes the camt message a namespace announces.
type message struct {
	name      string // "camt.053.001.02"
	kind      string // "052", "053" or "054"
	element   string // BkToCstmrStmt, BkToCstmrAcctRpt, BkToCstmrDbtCdtNtfctn
	statement string // Stmt, Rpt, Ntfctn
}

const nsPrefix = "urn:iso:std:iso:20022:tech:xsd:"

// Austrian banks write the namespaces of the STUZZA (Austrian payment
// standards) variant, "ISO:camt.053.001.02:APC:STUZZA:payments:003": the
// same messages under another name.
const (
	stuzzaPrefix = "ISO:"
	stuzzaSuffix = ":APC:STUZZA:payments:"
)

// parseNamespace recognises camt.052, .053 and .054, versions 001.01 to
// 001.13, in the ISO namespace or STUZZA's. notCamt is true when the
// document is not a camt message at all.
func parseNamespace(ns string) (m message, notCamt bool, err error) {
	ns = strings.TrimSpace(ns)
	rest, ok := strings.CutPrefix(ns, nsPrefix)
	if s, isStuzza := strings.CutPrefix(ns, stuzzaPrefix); !ok && isStuzza {
		if i := strings.Index(s, stuzzaSuffix); i > 0 && isDigits(s[i+len(stuzzaSuffix):]) {
			rest, ok = s[:i], true
		}
	}
	if !ok || !strings.HasPrefix(rest, "camt.") {
		return m, true, fmt.Errorf("%w: namespace %q is not an ISO 20022 camt message", ErrNamespace, ns)
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 4 || parts[2] != "001" || len(parts[3]) != 2 {
		return m, false, fmt.Errorf("%w: namespace %q", ErrNamespace, ns)
	}
	v, err := strconv.Atoi(parts[3])
	if err != nil || v < 1 || v > 13 {
		return m, false, fmt.Errorf("%w: %s version %s.%s is not read (001.01 to 001.13 are)", ErrNamespace, "camt."+parts[1], parts[2], parts[3])
	}
	m.name, m.kind = rest, parts[1]
	switch parts[1] {
	case "052":
		m.element, m.statement = "BkToCstmrAcctRpt", "Rpt"
	case "053":
		m.element, m.statement = "BkToCstmrStmt", "Stmt"
	case "054":
		m.element, m.statement = "BkToCstmrDbtCdtNtfctn", "Ntfctn"
	default:
		return m, false, fmt.Errorf("%w: camt.%s is not a statement, report or notification", ErrNamespace, parts[1])
	}
	return m, false, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// result is one answer of Next: a Record or a ParseError.
type result struct {
	rec formats.Record
	err *formats.ParseError
}

// Reader reads the booked entries of a camt.052, .053 or .054 document as
// Records. It implements formats.Reader. Build one with NewReader.
type Reader struct {
	opts       Options
	d          *xml.Decoder
	ph         phase
	msg        message
	st         *stmtState
	statements int
	skipped    int64
	records    int64
	out        []result
	head       int
	warnings   []Warning
	nwarn      int
	errs       int
	first      *formats.ParseError
	notCamt    bool
	stopped    bool
	done       bool
	final      error
}

// NewReader returns a Reader of r. Configuration errors, such as a missing
// Hasher, are returned by the first call to Next.
func NewReader(r io.Reader, opts Options) *Reader {
	rd := &Reader{opts: opts.withDefaults()}
	rd.d = xml.NewDecoder(r)
	rd.d.CharsetReader = rd.charset
	if opts.Hasher.IsZero() {
		rd.done, rd.final = true, ErrNoHasher
	}
	return rd
}

// Warnings returns the warnings found so far, at most Options.MaxWarnings.
// Call it after Next has returned its final answer to get them all.
func (r *Reader) Warnings() []Warning { return r.warnings }

// WarningCount is the number of warnings found, kept or not.
func (r *Reader) WarningCount() int { return r.nwarn }

// Skipped is the number of entries read so far that are not booked
// (pending, information, future) and so are not statement lines.
func (r *Reader) Skipped() int64 { return r.skipped }

// Message is the message and version read from the namespace, such as
// "camt.053.001.02", once the root element has been read.
func (r *Reader) Message() string { return r.msg.name }

// Next returns the next statement line as a Record. It returns a
// *formats.ParseError for each bad entry or balance, after which it may be
// called again to continue. At the end it returns io.EOF if the file passed
// every check, and otherwise a *FileError, which is final.
func (r *Reader) Next() (formats.Record, error) {
	for {
		if r.head < len(r.out) {
			res := r.out[r.head]
			r.out[r.head] = result{}
			r.head++
			if r.head == len(r.out) {
				r.out, r.head = r.out[:0], 0
			}
			if res.err != nil {
				return formats.Record{}, res.err
			}
			return res.rec, nil
		}
		if r.done {
			return formats.Record{}, r.final
		}
		if r.stopped || r.errs >= r.opts.MaxErrors {
			r.stopped = true
			r.finish()
			continue
		}
		r.step()
	}
}

// pos is where the next token starts: the decoder's position after the
// previous one.
func (r *Reader) pos() (int64, int64) {
	line, _ := r.d.InputPos()
	return int64(line), r.d.InputOffset()
}

func (r *Reader) step() {
	line, off := r.pos()
	tok, err := r.d.Token()
	if err == io.EOF {
		r.atEOF(line, off)
		return
	}
	if err != nil {
		r.syntax(line, off, err)
		return
	}
	switch t := tok.(type) {
	case xml.StartElement:
		r.start(t, line, off)
	case xml.EndElement:
		r.end(line, off)
	}
}

func (r *Reader) start(t xml.StartElement, line, off int64) {
	name := t.Name.Local
	switch r.ph {
	case beforeRoot, afterRoot:
		if name != "Document" {
			// A wrapper (a business application header envelope) or what
			// follows a Document: its own children arrive as tokens and
			// only a Document among them is read.
			return
		}
		m, notCamt, err := parseNamespace(t.Name.Space)
		if err != nil {
			r.notCamt = notCamt && r.ph == beforeRoot
			r.failStop(line, off, "Document", err)
			return
		}
		r.msg, r.ph = m, inRoot
		r.statements = 0
	case inRoot:
		if name != r.msg.element {
			r.failStop(line, off, name, fmt.Errorf("%w: %s in a %s document, want %s", ErrStructure, name, r.msg.name, r.msg.element))
			return
		}
		r.ph = inMessage
	case inMessage:
		if name != r.msg.statement {
			r.skip(line, off)
			return
		}
		r.statements++
		r.st = &stmtState{line: line, off: off}
		r.ph = inStatement
	case inStatement:
		r.statementChild(t, line, off)
	}
}

func (r *Reader) end(line, off int64) {
	switch r.ph {
	case inStatement:
		r.closeStatement()
		r.ph = inMessage
	case inMessage:
		if r.statements == 0 {
			r.fail(&formats.ParseError{Line: line, Offset: off, Field: r.msg.statement,
				Err: fmt.Errorf("%w: %s holds no %s", ErrStructure, r.msg.element, r.msg.statement)})
		}
		r.ph = inRoot
	case inRoot:
		r.ph = afterRoot
	}
}

func (r *Reader) atEOF(line, off int64) {
	switch r.ph {
	case afterRoot:
	case beforeRoot:
		r.notCamt = true
		r.fail(&formats.ParseError{Line: max(line, 1), Offset: off, Field: "Document", Err: fmt.Errorf("%w: no ISO 20022 Document element", ErrNamespace)})
	default:
		r.fail(&formats.ParseError{Line: max(line, 1), Offset: off, Err: fmt.Errorf("%w: document ends before it is closed", ErrSyntax)})
	}
	r.finish()
}

// skip passes over an element the reader does not use.
func (r *Reader) skip(line, off int64) {
	if err := r.d.Skip(); err != nil {
		r.syntax(line, off, err)
	}
}

// decode decodes one element into v, or stops the reader on a syntax error.
func (r *Reader) decode(v any, t *xml.StartElement, line, off int64) bool {
	if err := r.d.DecodeElement(v, t); err != nil {
		r.syntax(line, off, err)
		return false
	}
	return true
}

// syntax reports XML that does not parse. The decoder cannot go on after
// it, so reading stops.
func (r *Reader) syntax(line, off int64, err error) {
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		line = int64(se.Line)
		err = errors.New(se.Msg)
	}
	if r.ph == beforeRoot {
		r.notCamt = true
	}
	r.failStop(max(line, 1), off, "", fmt.Errorf("%w: %w", ErrSyntax, err))
}

func (r *Reader) failStop(line, off int64, field string, err error) {
	r.fail(&formats.ParseError{Line: max(line, 1), Offset: off, Field: field, Err: err})
	r.stopped = true
}

// fail queues a ParseError. An error inside a statement leaves its
// balances unchecked, so that one fault is not reported twice.
func (r *Reader) fail(pe *formats.ParseError) {
	r.out = append(r.out, result{err: pe})
	r.errs++
	if r.first == nil {
		r.first = pe
	}
	if r.st != nil {
		r.st.broken = true
	}
}

func (r *Reader) warn(line, off int64, code, format string, args ...any) {
	r.nwarn++
	if len(r.warnings) < r.opts.MaxWarnings {
		r.warnings = append(r.warnings, Warning{Line: line, Offset: off, Code: code, Message: fmt.Sprintf(format, args...)})
	}
}

func (r *Reader) emit(rec formats.Record) bool {
	r.records++
	if r.records > r.opts.Limits.MaxRecords {
		r.failStop(rec.Line, rec.Offset, "Ntry", fmt.Errorf("%w: more than %d records", formats.ErrTooLarge, r.opts.Limits.MaxRecords))
		return false
	}
	r.out = append(r.out, result{rec: rec})
	return true
}

func (r *Reader) finish() {
	r.done, r.final = true, io.EOF
	if r.errs > 0 {
		r.final = &FileError{Invalid: ErrInvalidFile, First: r.first, Count: r.errs, Stopped: r.stopped, NotThisFormat: r.notCamt}
	}
}

// charset reads documents declared in ISO-8859-1 and its relatives. Every
// value the reader keeps (amounts, codes, references) is ASCII, where these
// encodings agree, so other single-byte Latin encodings are read as
// ISO-8859-1 with a warning rather than refused.
func (r *Reader) charset(label string, in io.Reader) (io.Reader, error) {
	l := strings.ToLower(strings.TrimSpace(label))
	switch {
	case l == "iso-8859-1" || l == "latin1" || l == "latin-1" || l == "us-ascii" || l == "ascii":
	case strings.HasPrefix(l, "iso-8859-") || strings.HasPrefix(l, "windows-125") || l == "cp1252":
		r.warn(1, 0, WarnEncoding, "encoding %q read as ISO-8859-1; only ASCII values are kept", label)
	default:
		return nil, fmt.Errorf("encoding %q is not supported", label)
	}
	return &latin1{r: bufio.NewReader(in)}, nil
}

// latin1 turns ISO-8859-1 bytes into UTF-8.
type latin1 struct {
	r       *bufio.Reader
	pending []byte
}

func (l *latin1) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(l.pending) > 0 {
			c := copy(p[n:], l.pending)
			l.pending = l.pending[c:]
			n += c
			continue
		}
		b, err := l.r.ReadByte()
		if err != nil {
			if n > 0 {
				return n, nil
			}
			return 0, err
		}
		if b < utf8.RuneSelf {
			p[n] = b
			n++
			continue
		}
		var buf [2]byte
		utf8.EncodeRune(buf[:], rune(b))
		l.pending = append(l.pending[:0], buf[:]...)
	}
	return n, nil
}

var _ formats.Reader = (*Reader)(nil)
