package ach

import (
	"errors"
	"fmt"
	"io"
	"strings"

	moov "github.com/moov-io/ach"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/pii"
)

// Options configure a Reader.
type Options struct {
	// Hasher turns a routing number and an account number into the
	// pii.Account that a Record carries. It is required: a Reader with the
	// zero Hasher returns ErrNoHasher from its first Next.
	Hasher pii.Hasher
	// Limits bound the input. MaxLineBytes is the longest physical line in
	// bytes, line break excluded; a file written without line breaks is one
	// physical line, so reading a large one needs a larger limit.
	// MaxRecords is the most non-blank 94-character records (headers,
	// entries, addenda, controls and filler alike). Zero fields take the
	// defaults of formats.Limits.
	Limits formats.Limits
	// Loosen names money checks that a known source needs relaxed. The
	// zero value relaxes nothing.
	Loosen Loosen
}

// Loosen names the money checks a source may relax, as moov-io/ach's
// ValidateOpts names its bypasses. Each one is given explicitly (a flag of
// ingest), and the intake records it on the run.
type Loosen struct {
	// ForwardTracePrefix accepts forward entries whose trace number does
	// not start with the batch's ODFI routing prefix. The trace number is
	// part of the key; a source that numbers its traces its own way keys
	// them the same way every time, which is all the key needs.
	ForwardTracePrefix bool
	// RDFICheckDigit accepts an entry whose RDFI check digit is wrong. The
	// routing number names the account's bank and enters the account hash.
	RDFICheckDigit bool
}

// Reader reads a NACHA ACH file one entry at a time and returns each entry
// as a formats.Record. It implements formats.Reader: Next returns io.EOF only
// after the file control has been read and every batch and file total has
// matched, so a caller that posts only after io.EOF never posts part of a bad
// file.
//
// A Reader holds one batch header and one entry with its addenda at a time;
// its memory does not grow with the size of the file.
type Reader struct {
	hasher pii.Hasher
	limits formats.Limits
	sc     *scanner

	queue []result // records and errors ready for Next, in file order
	head  int
	final error // once set, every later Next returns it
	errs  int64 // ParseErrors returned or queued

	records int64 // non-blank records read, for Limits.MaxRecords
	last    pos   // the last non-blank record read
	rec     record

	file    fileState
	inBatch bool
	batch   batchState
	entry   entryState
	ed      moov.EntryDetail // reused by standardEntry

	warnings []Warning
	nwarn    int
	loosen   Loosen
}

// result is one value for Next to return.
type result struct {
	rec formats.Record
	err error
}

// pos is where a record starts.
type pos struct{ line, off int64 }

// NewReader returns a Reader of the ACH file in r.
func NewReader(r io.Reader, opts Options) *Reader {
	rd := &Reader{hasher: opts.Hasher, limits: opts.Limits.WithDefaults(), loosen: opts.Loosen}
	rd.sc = newScanner(r, rd.limits.MaxLineBytes)
	if zeroHasher(opts.Hasher) {
		rd.final = ErrNoHasher
	}
	return rd
}

// zeroHasher reports whether h is the zero pii.Hasher. Its key is
// unexported, so it is recognised by what it computes: pii.New never makes
// a Hasher with an empty key.
func zeroHasher(h pii.Hasher) bool {
	return h.IsZero()
}

// Next returns the next record. It returns a *formats.ParseError for each
// bad record, naming its line and byte offset; Next may be called again to
// read past it, and the file is then rejected as a whole: after the last
// record, Next returns an error wrapping ErrInvalidFile instead of io.EOF.
// Any error that is not a *formats.ParseError is final.
func (r *Reader) Next() (formats.Record, error) {
	for {
		if r.head < len(r.queue) {
			res := r.queue[r.head]
			r.queue[r.head] = result{}
			r.head++
			if r.head == len(r.queue) {
				r.queue, r.head = r.queue[:0], 0
			}
			return res.rec, res.err
		}
		if r.final != nil {
			return formats.Record{}, r.final
		}
		r.step()
	}
}

// step reads one record and handles it, queueing whatever it completes.
func (r *Reader) step() {
	c, err := r.sc.next()
	if errors.Is(err, io.EOF) {
		r.finish()
		return
	}
	var pe *formats.ParseError
	if errors.As(err, &pe) {
		r.push(result{err: pe})
		r.errs++
		r.stop()
		return
	}
	if err != nil {
		r.final = fmt.Errorf("ach: reading line %d: %w", r.sc.line, err)
		return
	}
	if c.blank() {
		return
	}
	p := pos{c.line, c.off}
	r.last = p
	r.records++
	if r.records > r.limits.MaxRecords {
		r.fail(p, "", formats.ErrTooLarge, "more than %d records", r.limits.MaxRecords)
		r.stop()
		return
	}
	if c.bad >= 0 {
		text, ok := freeText(c.text)
		if !ok {
			r.fail(p, "", ErrNotText, "the byte at offset %d is not printable text", c.bad)
			r.entry.broken = true // the record may have been one of its addenda
			return
		}
		r.warn(p, WarnFreeText, "characters outside printable ASCII in free text, read as \"?\" (the first at offset %d)", c.bad)
		c.text, c.runes = []byte(text), len(text)
	}
	if !c.first && c.runes < recordLength {
		r.fail(p, "", ErrLineLength, "%d characters follow a 94-character record on the same line", c.runes)
		r.entry.broken = true
		return
	}
	text := string(c.text)
	if c.runes < recordLength {
		// moov-io/ach pads short lines: editors and mail gateways trim
		// trailing spaces, and the fields they held were blank.
		text += strings.Repeat(" ", recordLength-c.runes)
	}
	r.rec = record{text: text, line: c.line, off: c.off}
	r.dispatch(&r.rec)
}

// dispatch hands a record to the handler for its type.
func (r *Reader) dispatch(rc *record) {
	p := pos{rc.line, rc.off}
	t := rc.text[0]
	if !r.file.header && t != '1' {
		r.push(result{err: &formats.ParseError{Line: p.line, Offset: p.off, Err: fmt.Errorf(
			"%w: %w: the first record is of type %q; an ACH file starts with a file header (1)",
			formats.ErrNotThisFormat, ErrStructure, t)}})
		r.errs++
		r.stop()
		return
	}
	if r.file.control {
		if !isFiller(rc) {
			r.fail(p, "", ErrStructure, "a record of type %q follows the file control on line %d; only filler (9999...) may", t, r.file.controlLine)
		}
		return
	}
	switch t {
	case '1':
		r.fileHeader(rc)
	case '5':
		r.batchHeader(rc)
	case '6':
		r.entryDetail(rc)
	case '7':
		r.addenda(rc)
	case '8':
		r.batchControl(rc)
	case '9':
		if isFiller(rc) {
			r.fail(p, "", ErrStructure, "filler record before the file control")
			return
		}
		r.fileControl(rc)
	default:
		r.fail(p, "", ErrStructure, "unknown record type %q", t)
	}
}

// isFiller reports whether the record is a block filler of 94 nines.
func isFiller(rc *record) bool {
	return rc.text == fillerRecord
}

var fillerRecord = strings.Repeat("9", recordLength)

// finish runs the end-of-file checks and sets the final result.
func (r *Reader) finish() {
	r.completeEntry()
	p := r.last
	switch {
	case !r.file.header:
		r.push(result{err: &formats.ParseError{Line: 1, Offset: 0,
			Err: fmt.Errorf("%w: %w: the file is empty", formats.ErrNotThisFormat, ErrTruncated)}})
		r.errs++
	case r.inBatch:
		r.fail(p, "", ErrTruncated, "the file ends inside the batch of line %d, without its batch control or the file control", r.batch.line)
	case !r.file.control:
		r.fail(p, "", ErrTruncated, "the file ends without a file control")
	}
	r.stop()
}

// stop makes the reader return its final result once the queue is empty.
func (r *Reader) stop() {
	if r.errs > 0 {
		r.final = fmt.Errorf("%w: %d error(s)", ErrInvalidFile, r.errs)
		return
	}
	r.final = io.EOF
}

func (r *Reader) push(res result) {
	r.queue = append(r.queue, res)
}

// fail queues a ParseError at p, wrapping kind. An error inside a batch
// marks the batch so that its control totals, which no longer mean
// anything, are not compared.
func (r *Reader) fail(p pos, field string, kind error, format string, args ...any) {
	r.push(result{err: &formats.ParseError{Line: p.line, Offset: p.off, Field: field,
		Err: fmt.Errorf("%w: "+format, append([]any{kind}, args...)...)}})
	r.errs++
	if r.inBatch {
		r.batch.broken = true
	}
}

// failMoov queues a ParseError for an error from a moov-io/ach Validate
// method, without personal data: see describe and scrub.
func (r *Reader) failMoov(p pos, err error, secrets ...string) {
	field, msg := describe(err)
	r.fail(p, field, ErrField, "%s", scrub(msg, secrets...))
}
