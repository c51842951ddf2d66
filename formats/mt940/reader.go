package mt940

import (
	"errors"
	"fmt"
	"io"

	"github.com/clearing-dev/clearing/formats"
)

// Reader reads the statement lines of MT940 and MT942 messages as Records.
// It implements formats.Reader. Build one with NewReader.
type Reader struct {
	opts     Options
	sc       *scanner
	msg      *msgState
	nextTyp  string // message type announced by block 2 for the next message
	messages int
	fields   int64 // fields read, for telling MT940 from other text
	records  int64
	out      []result
	head     int
	warnings []Warning
	nwarn    int
	errs     int
	first    *formats.ParseError
	stopped  bool
	done     bool
	final    error
}

type result struct {
	rec formats.Record
	err *formats.ParseError
}

// NewReader returns a Reader of r. Configuration errors, such as a missing
// Hasher, are returned by the first call to Next.
func NewReader(r io.Reader, opts Options) *Reader {
	opts = opts.withDefaults()
	rd := &Reader{opts: opts, sc: newScanner(r, opts.Limits.MaxLineBytes)}
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

// Next returns the next statement line as a Record. It returns a
// *formats.ParseError for each bad field, after which it may be called
// again to continue. At the end it returns io.EOF if the file passed every
// check, and otherwise a *FileError, which is final. Lines are returned
// before the closing balance that checks them: commit nothing before io.EOF.
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

func (r *Reader) step() {
	ev, err := r.sc.next()
	if err == io.EOF {
		r.endMessage(r.sc.line, r.sc.offset)
		r.finish()
		return
	}
	var pe *formats.ParseError
	if errors.As(err, &pe) {
		r.fail(pe)
		r.stopped = true
		return
	}
	switch ev.kind {
	case evStart:
		r.endMessage(ev.line, ev.offset)
		r.nextTyp = ev.msgTyp
	case evEnd:
		r.endMessage(ev.line, ev.offset)
	case evText:
		r.warn(ev.line, ev.offset, WarnText, "a line outside any field was ignored")
	case evField:
		r.fields++
		r.field(&ev)
	}
}

func (r *Reader) finish() {
	if r.sc.latin1 > 0 {
		r.warn(r.sc.firstL1, 0, WarnEncoding, "%d lines are not UTF-8 and were read as ISO-8859-1", r.sc.latin1)
	}
	if r.sc.control > 0 {
		r.warn(r.sc.firstCB, 0, WarnControl, "control bytes were removed from %d lines", r.sc.control)
	}
	notMT940 := false
	if r.messages == 0 && r.errs == 0 {
		notMT940 = true
		r.fail(&formats.ParseError{Line: max(r.sc.line, 1), Offset: 0, Err: fmt.Errorf("%w: no MT940 or MT942 message in the file", ErrStructure)})
	}
	r.done, r.final = true, io.EOF
	if r.errs > 0 {
		r.final = &FileError{Invalid: ErrInvalidFile, First: r.first, Count: r.errs, Stopped: r.stopped, NotThisFormat: notMT940 || r.fields == 0}
	}
}

// fail queues a ParseError. An error inside a message leaves its balances
// unchecked, so that one fault is not reported twice.
func (r *Reader) fail(pe *formats.ParseError) {
	r.out = append(r.out, result{err: pe})
	r.errs++
	if r.first == nil {
		r.first = pe
	}
	if r.msg != nil {
		r.msg.broken = true
	}
}

func (r *Reader) failAt(ev *event, field string, err error) {
	r.fail(&formats.ParseError{Line: ev.line, Offset: ev.offset, Field: field, Err: err})
}

func (r *Reader) warn(line, off int64, code, format string, args ...any) {
	r.nwarn++
	if len(r.warnings) < r.opts.MaxWarnings {
		r.warnings = append(r.warnings, Warning{Line: line, Offset: off, Code: code, Message: fmt.Sprintf(format, args...)})
	}
}

func (r *Reader) emit(rec formats.Record) {
	r.records++
	if r.records > r.opts.Limits.MaxRecords {
		r.fail(&formats.ParseError{Line: rec.Line, Offset: rec.Offset, Field: "61",
			Err: fmt.Errorf("%w: more than %d records", formats.ErrTooLarge, r.opts.Limits.MaxRecords)})
		r.stopped = true
		return
	}
	r.out = append(r.out, result{rec: rec})
}

var _ formats.Reader = (*Reader)(nil)
