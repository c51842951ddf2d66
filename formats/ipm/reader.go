package ipm

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/pii"
)

// The blockings Options.Blocking accepts ("" detects).
const (
	Blocked   = "blocked"
	Unblocked = "unblocked"
)

const (
	// readChunk is how much of the input one read takes.
	readChunk = 64 << 10
	// maxLookahead bounds what detection holds before one blocking is
	// ruled out. A wrong blocking misreads a length within a block or two,
	// so a file that still reads both ways after this much is refused.
	maxLookahead = 1 << 20
	// maxWarnings bounds the warnings kept; later ones are only counted.
	maxWarnings = 100
)

// Options configure a Reader.
type Options struct {
	// Blocking is Blocked, Unblocked or "" to detect it: the file must read
	// whole as exactly one of them.
	Blocking string
	// Encoding names the code page of the text (EncodingCP500,
	// EncodingCP037, EncodingLatin1). Empty detects the family from the
	// MTI: EBCDIC reads as cp500, ASCII as latin1.
	Encoding string
	// Hasher turns PANs into account references. It is required.
	Hasher pii.Hasher
	// Limits bound the size of one record and the number of records.
	Limits formats.Limits
	// Statement reads the file as the scheme's statement: settlement
	// position details (1644/688) become statement lines. Otherwise every
	// 1644 message is a Skip.
	Statement bool
}

// Reader reads the messages of one IPM file as formats.Records, front to
// back, once. Until the blocking is known it reads the file both ways side
// by side and holds the records of each; once one way has failed, it holds
// one message at a time.
type Reader struct {
	src    io.Reader
	chunk  []byte
	opts   Options
	limits formats.Limits
	lanes  []*lane
	prov   *lane // the blocking records come from; nil until known
	eof    bool
	final  error
	msg    message
	probe  message
	mapper mapper
	ctl    control
	broken bool // the chosen blocking hit a framing error
	// pending is the error about a record that Next returns before the
	// final error, when neither blocking reads the file.
	pending *formats.ParseError

	warnings []string
	warned   int
}

// lane is one blocking being read.
type lane struct {
	blocked bool
	ub      *unblocker
	vbs     *vbsFramer
	dec     *decoder
	good    int64
	failure *formats.ParseError
	out     bool
	queue   []queued
	qpos    int
	arena   []byte
}

type queued struct {
	index, off int64
	body       []byte
	err        *formats.ParseError
}

// NewReader returns a Reader of r. It fails only on unusable options;
// problems with the file come from Next.
func NewReader(r io.Reader, opts Options) (*Reader, error) {
	if opts.Hasher.IsZero() {
		return nil, fmt.Errorf("%w: the Hasher is the zero value; build it with pii.New", ErrOptions)
	}
	if opts.Encoding != "" {
		if _, ok := charsetNamed(opts.Encoding); !ok {
			return nil, fmt.Errorf("%w: unknown encoding %q; use one of %s", ErrOptions, opts.Encoding, strings.Join(Encodings(), ", "))
		}
	}
	var blockings []bool
	switch opts.Blocking {
	case "":
		blockings = []bool{true, false}
	case Blocked:
		blockings = []bool{true}
	case Unblocked:
		blockings = []bool{false}
	default:
		return nil, fmt.Errorf("%w: unknown blocking %q; use %s, %s or nothing to detect it", ErrOptions, opts.Blocking, Blocked, Unblocked)
	}
	rd := &Reader{src: r, chunk: make([]byte, readChunk), opts: opts, limits: opts.Limits.WithDefaults(),
		mapper: mapper{hasher: opts.Hasher, statement: opts.Statement}}
	rd.ctl.warn = rd.warn
	for _, b := range blockings {
		l := &lane{blocked: b}
		fill := func(byte) bool { return false }
		if b {
			fill = isFill
		}
		l.vbs = newVBSFramer(rd.limits.MaxLineBytes, fill)
		emit := func(fr frame) { rd.emitted(l, fr) }
		if b {
			l.ub = &unblocker{next: func(p []byte) { l.vbs.feed(p, emit) }}
		}
		rd.lanes = append(rd.lanes, l)
	}
	if len(rd.lanes) == 1 {
		rd.prov = rd.lanes[0]
	}
	return rd, nil
}

// Blocked reports whether records come from the file read as 1014-blocked;
// it is meaningful once Next has returned a record.
func (r *Reader) Blocked() bool { return r.prov != nil && r.prov.blocked }

// Warnings returns what the file breaks that no key, amount, count or date
// depends on (DESIGN principle 10): a DE71 out of sequence, a trailer whose
// file id differs from its header's. The run records them; they never
// reject the file.
func (r *Reader) Warnings() []string {
	w := r.warnings
	if r.warned > len(w) {
		w = append(w[:len(w):len(w)], fmt.Sprintf("and %d more warnings", r.warned-len(w)))
	}
	return w
}

func (r *Reader) warn(format string, args ...any) {
	r.warned++
	if len(r.warnings) < maxWarnings {
		r.warnings = append(r.warnings, fmt.Sprintf(format, args...))
	}
}

func (l *lane) stored(off int64) int64 {
	if l.blocked {
		return storedOffset(off)
	}
	return off
}

func (l *lane) name() string {
	if l.blocked {
		return "1014-blocked VBS"
	}
	return "unblocked VBS"
}

// Next returns the next record. See formats.Reader.
func (r *Reader) Next() (formats.Record, error) {
	for r.final == nil {
		if pe := r.pending; pe != nil {
			r.pending = nil
			r.final = fmt.Errorf("%w: neither 1014-blocked nor unblocked VBS reads the file", ErrFramingUndetected)
			return formats.Record{}, pe
		}
		if l := r.prov; l != nil {
			if l.qpos < len(l.queue) {
				l.qpos++
				return r.record(&l.queue[l.qpos-1])
			}
			l.queue, l.qpos, l.arena = l.queue[:0], 0, l.arena[:0]
		}
		switch {
		case r.broken:
			r.final = fmt.Errorf("%w: reading stopped at the framing error above", ErrFraming)
		case r.eof:
			r.final = io.EOF
			if ce := r.ctl.finish(); ce != nil {
				return formats.Record{}, &formats.ParseError{Line: 0, Offset: r.ctl.headerOff, Field: ce.field, Err: ce.err}
			}
		default:
			if err := r.fill(); err != nil {
				r.final = err
			}
		}
	}
	return formats.Record{}, r.final
}

// record decodes, checks and maps one record of the chosen blocking.
func (r *Reader) record(q *queued) (formats.Record, error) {
	if q.err != nil {
		r.broken = true
		return formats.Record{}, q.err
	}
	if q.index > r.limits.MaxRecords {
		r.final = fmt.Errorf("%w: the file has more than %d records", formats.ErrTooLarge, r.limits.MaxRecords)
		return formats.Record{}, r.final
	}
	l := r.prov
	fail := func(field string, err error) error {
		return &formats.ParseError{Line: q.index, Offset: q.off, Field: field, Err: err}
	}
	if l.dec == nil {
		if err := l.pickEncoding(r.opts.Encoding, q.body); err != nil {
			return formats.Record{}, fail("MTI", err)
		}
	}
	if de := l.dec.decode(q.body, &r.msg); de != nil {
		r.ctl.unreadable(nil)
		return formats.Record{}, fail(de.field, fmt.Errorf("%w: %s", ErrDecode, de.text))
	}
	if err := r.msg.parsePDS(); err != nil {
		r.ctl.unreadable(&r.msg)
		return formats.Record{}, fail("PDS", fmt.Errorf("%w: %w", ErrPDS, err))
	}
	if ce := r.ctl.observe(&r.msg, q.off); ce != nil {
		return formats.Record{}, fail(ce.field, ce.err)
	}
	rec, me := r.mapper.record(&r.msg)
	if me != nil {
		de71, _ := r.msg.get(71)
		return formats.Record{}, fail(me.field, fmt.Errorf("%w: message %s/%s, DE71 %s: %s", ErrInvalid, r.msg.mti, r.msg.values[24], de71, me.text))
	}
	rec.Line, rec.Offset = q.index, q.off
	return rec, nil
}

// pickEncoding settles a lane's code page from its first record's MTI.
func (l *lane) pickEncoding(name string, body []byte) error {
	ebcdic, ok := detectEBCDIC(body)
	if !ok {
		return fmt.Errorf("%w: the MTI is neither four EBCDIC nor four ASCII digits", ErrDecode)
	}
	cs := latin1
	if ebcdic {
		cs = cp500
	}
	if name != "" {
		cs, _ = charsetNamed(name)
		if cs.ebcdic != ebcdic {
			return fmt.Errorf("%w: the MTI is not in %s", ErrDecode, cs.name)
		}
	}
	l.dec = newDecoder(cs)
	return nil
}

// emitted takes a record cut by lane l. Until the blocking is known, every
// lane decodes what it cuts, and one that fails is ruled out.
func (r *Reader) emitted(l *lane, fr frame) {
	if l.out {
		return
	}
	q := queued{index: fr.index, off: l.stored(fr.off)}
	if fr.err != nil {
		q.err = &formats.ParseError{Line: fr.index, Offset: q.off, Err: fr.err}
	}
	if l != r.prov {
		if q.err == nil {
			if l.dec == nil {
				if err := l.pickEncoding(r.opts.Encoding, fr.body); err != nil {
					q.err = &formats.ParseError{Line: fr.index, Offset: q.off, Field: "MTI", Err: err}
				}
			}
			if q.err == nil {
				if de := l.dec.decode(fr.body, &r.probe); de != nil {
					q.err = &formats.ParseError{Line: fr.index, Offset: q.off, Field: de.field, Err: fmt.Errorf("%w: %s", ErrDecode, de.text)}
				}
			}
		}
		if q.err != nil {
			if l.failure == nil {
				l.failure = q.err
			}
			l.out, l.queue, l.arena = true, nil, nil
			l.vbs.dead = true // nothing it cuts from here on matters
			return
		}
		l.good++
		if r.prov != nil {
			return
		}
	}
	if fr.body != nil {
		n := len(l.arena)
		l.arena = append(l.arena, fr.body...)
		q.body = l.arena[n:len(l.arena):len(l.arena)]
	}
	l.queue = append(l.queue, q)
}

// fill reads the next piece of input and feeds it to every lane still
// being read.
func (r *Reader) fill() error {
	n, err := r.src.Read(r.chunk)
	if n > 0 {
		for _, l := range r.lanes {
			if l.out {
				continue
			}
			if l.ub != nil {
				l.ub.feed(r.chunk[:n])
			} else {
				l.vbs.feed(r.chunk[:n], func(fr frame) { r.emitted(l, fr) })
			}
		}
	}
	switch {
	case errors.Is(err, io.EOF):
		r.eof = true
		for _, l := range r.lanes {
			if l.out {
				continue
			}
			deadBefore := l.vbs.dead
			l.vbs.finish(func(fr frame) { r.emitted(l, fr) })
			// A blocked file is whole blocks; that is checked only when the
			// records themselves ended well, whose error says more.
			if l.ub != nil && !l.out && !deadBefore && l.vbs.ended {
				if uerr := l.ub.check(); uerr != nil {
					r.emitted(l, frame{index: l.vbs.index + 1, off: l.vbs.off, err: uerr})
				}
			}
		}
	case err != nil:
		return fmt.Errorf("ipm: reading the file: %w", err)
	}
	if r.prov == nil {
		return r.choose()
	}
	return nil
}

// choose settles the blocking once one lane is left, or says why none or
// both read the file.
func (r *Reader) choose() error {
	var alive []*lane
	held := 0
	for _, l := range r.lanes {
		if !l.out {
			alive = append(alive, l)
			held += len(l.arena)
		}
	}
	switch {
	case len(alive) == 1:
		r.prov = alive[0]
		return nil
	case len(alive) == 0:
		r.pending = r.neither()
		return nil
	case r.eof:
		return fmt.Errorf("%w: the file reads whole both as 1014-blocked and as unblocked VBS; choose one", ErrFramingUndetected)
	case held > maxLookahead:
		return fmt.Errorf("%w: the first %d bytes read both as 1014-blocked and as unblocked VBS; choose one", ErrFramingUndetected, held)
	}
	return nil
}

// neither is the error when no blocking reads the file: the failure of the
// one that read further, which is the file's real fault when it has one (a
// truncated record), with the other's failure for context.
func (r *Reader) neither() *formats.ParseError {
	best := r.lanes[0]
	for _, l := range r.lanes[1:] {
		if l.good > best.good {
			best = l
		}
	}
	var other []string
	for _, l := range r.lanes {
		if l != best {
			other = append(other, fmt.Sprintf("read as %s: message %d, offset %d: %v", l.name(), l.failure.Line, l.failure.Offset, l.failure.Err))
		}
	}
	pe := *best.failure
	pe.Err = fmt.Errorf("%w (read as %s, after %d good records; %s): %w", ErrFramingUndetected, best.name(), best.good, strings.Join(other, "; "), best.failure.Err)
	return &pe
}
