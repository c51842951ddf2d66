package iso8583

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/pii"
)

// readChunk is how much of the input one read takes.
const readChunk = 64 << 10

// Options configure a Reader.
type Options struct {
	// Framing is one of the Framing constants. Empty detects it: the file
	// must read consistently under exactly one framing.
	Framing string
	// Spec is a built-in spec name (SpecName87, SpecName87ASCII) or the path
	// of a moov-io/iso8583 JSON spec. Empty is DefaultSpec.
	Spec string
	// Hasher turns PANs into account references. It is required: the zero
	// Hasher is refused.
	Hasher pii.Hasher
	// Limits bound the size of one message (MaxLineBytes) and the number of
	// messages (MaxRecords).
	Limits formats.Limits
	// Now gives the day that dates without a year are placed against. It is
	// called once, by NewReader; nil means time.Now.
	Now func() time.Time
}

// Reader reads the messages of one ISO 8583 file as formats.Records. It
// reads its input once, front to back, and holds at most a few messages in
// memory whatever the size of the file.
//
// When no framing is given, every framing reads the file side by side and
// checks each message it cuts (every length in range, every message decoded
// by the spec to its last byte). Records come from the first framing that
// decodes a first message; the file ends with io.EOF only if that framing,
// and no other, read the whole file. Otherwise the last error is
// ErrFramingUndetected, and the caller must discard what it read.
type Reader struct {
	src    io.Reader
	chunk  []byte
	dec    *decoder
	mapper mapper
	limits formats.Limits
	detect bool
	lanes  []*lane
	prov   *lane // the framing records come from; nil until chosen
	eof    bool
	final  error
	msg    message
	probe  message // for the messages of the framings only being checked
}

// lane is one framing being read.
type lane struct {
	fr      *framer
	good    int64               // messages that decoded
	failure *formats.ParseError // the first framing or decoding failure
	out     bool                // ruled out (detection only)
	queue   []frame             // messages waiting for Next
	qpos    int
	arena   []byte // the bodies of queued messages
	emit    func(frame)
}

// NewReader returns a Reader of r. It fails only on unusable options or
// spec; problems with the file come from Next.
func NewReader(r io.Reader, opts Options) (*Reader, error) {
	if opts.Framing != "" && !knownFraming(opts.Framing) {
		return nil, fmt.Errorf("%w: unknown framing %q; use one of %s", ErrOptions, opts.Framing, strings.Join(Framings(), ", "))
	}
	if opts.Hasher.IsZero() {
		return nil, fmt.Errorf("%w: the Hasher is the zero value; build it with pii.New", ErrOptions)
	}
	spec, err := LoadSpec(opts.Spec)
	if err != nil {
		return nil, err
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	rd := &Reader{
		src:    r,
		chunk:  make([]byte, readChunk),
		dec:    newDecoder(spec),
		mapper: mapper{hasher: opts.Hasher, years: newYearOf(now())},
		limits: opts.Limits.WithDefaults(),
		detect: opts.Framing == "",
	}
	kinds := []string{opts.Framing}
	if rd.detect {
		kinds = Framings()
	}
	for _, k := range kinds {
		l := &lane{fr: newFramer(k, rd.limits.MaxLineBytes)}
		l.emit = func(fr frame) { rd.emitted(l, &fr) }
		rd.lanes = append(rd.lanes, l)
	}
	if !rd.detect {
		rd.prov = rd.lanes[0]
	}
	return rd, nil
}

// Framing is the framing records come from: the one given, or the one
// detection settled on so far ("" before the first record).
func (r *Reader) Framing() string {
	if r.prov == nil {
		return ""
	}
	return r.prov.fr.kind
}

// Next returns the next record. See formats.Reader.
func (r *Reader) Next() (formats.Record, error) {
	for r.final == nil {
		if l := r.prov; l != nil {
			if l.qpos < len(l.queue) {
				l.qpos++
				return r.record(&l.queue[l.qpos-1])
			}
			l.queue, l.qpos, l.arena = l.queue[:0], 0, l.arena[:0]
		}
		switch {
		case r.eof:
			r.final = r.verdict()
		case r.prov != nil && r.prov.fr.dead && (!r.detect || !r.checking()):
			r.final = r.stopped()
		default:
			if err := r.fill(); err != nil {
				r.final = err
			}
		}
	}
	return formats.Record{}, r.final
}

// record decodes and maps one message of the chosen framing.
func (r *Reader) record(fr *frame) (formats.Record, error) {
	if fr.index > r.limits.MaxRecords {
		r.final = fmt.Errorf("%w: the file has more than %d messages", formats.ErrTooLarge, r.limits.MaxRecords)
		return formats.Record{}, r.final
	}
	if fr.err != nil {
		r.prov.noteFailure(fr.err)
		return formats.Record{}, fr.err
	}
	if pe := r.decode(fr, &r.msg); pe != nil {
		r.prov.noteFailure(pe)
		return formats.Record{}, pe
	}
	r.prov.good++
	return r.mapper.record(&r.msg, fr.index, fr.offset)
}

func (r *Reader) decode(fr *frame, m *message) *formats.ParseError {
	derr := r.dec.decode(fr.body, m)
	if derr == nil {
		return nil
	}
	return &formats.ParseError{Line: fr.index, Offset: fr.offset, Field: derr.fieldName(),
		Err: fmt.Errorf("%w: %s", ErrDecode, derr.text)}
}

func (l *lane) noteFailure(pe *formats.ParseError) {
	if l.failure == nil {
		l.failure = pe
	}
}

// emitted takes a message cut by lane l's framer.
func (r *Reader) emitted(l *lane, fr *frame) {
	if l != r.prov {
		if fr.err != nil {
			l.noteFailure(fr.err)
		} else if pe := r.decode(fr, &r.probe); pe != nil {
			l.noteFailure(pe)
		} else {
			l.good++
		}
		if l.failure != nil {
			l.out, l.queue, l.arena = true, nil, nil
			return
		}
		if r.prov != nil {
			return
		}
	}
	c := *fr
	if fr.body != nil {
		n := len(l.arena)
		l.arena = append(l.arena, fr.body...)
		c.body = l.arena[n:len(l.arena):len(l.arena)]
	}
	l.queue = append(l.queue, c)
}

// fill reads the next piece of input and feeds it to every framing still
// being read.
func (r *Reader) fill() error {
	n, err := r.src.Read(r.chunk)
	if n > 0 {
		for _, l := range r.lanes {
			if !l.out && !l.fr.dead {
				l.fr.feed(r.chunk[:n], l.emit)
			}
		}
	}
	switch {
	case errors.Is(err, io.EOF):
		r.eof = true
		for _, l := range r.lanes {
			if !l.out {
				l.fr.finish(l.emit)
			}
		}
	case err != nil:
		return fmt.Errorf("iso8583: reading the file: %w", err)
	}
	if r.prov == nil {
		r.choose()
	}
	return nil
}

// choose settles the framing records come from, once every framing has
// either decoded a first message or failed: the first in Framings() order
// that decoded one.
func (r *Reader) choose() {
	for _, l := range r.lanes {
		if !r.eof && !l.out && l.good == 0 {
			return
		}
	}
	for _, l := range r.lanes {
		if !l.out && l.good > 0 && r.prov == nil {
			r.prov = l
			continue
		}
		l.queue, l.arena = nil, nil
	}
	if r.prov == nil {
		r.final = r.verdict()
	}
}

// checking reports whether a framing other than the chosen one is still
// being checked.
func (r *Reader) checking() bool {
	for _, l := range r.lanes {
		if l != r.prov && !l.out && !l.fr.dead {
			return true
		}
	}
	return false
}

// stopped is the final error after a framing error that left the chosen
// framing unable to find the next message.
func (r *Reader) stopped() error {
	if r.detect {
		return r.verdict()
	}
	if pe := r.prov.failure; pe != nil {
		return fmt.Errorf("%w at message %d, offset %d: the messages after it cannot be found", ErrStopped, pe.Line, pe.Offset)
	}
	return ErrStopped
}

// verdict is the last word on the file: io.EOF, or why the framing could
// not be detected.
func (r *Reader) verdict() error {
	if !r.detect {
		return io.EOF
	}
	var fits []string
	for _, l := range r.lanes {
		if !l.out && l.failure == nil && l.good > 0 {
			fits = append(fits, l.fr.kind)
		}
	}
	switch {
	case len(fits) == 1 && r.prov != nil && fits[0] == r.prov.fr.kind:
		return io.EOF
	case len(fits) == 1 && r.prov != nil:
		return fmt.Errorf("%w: only %s reads the whole file, but reading began as %s", ErrFramingUndetected, fits[0], r.prov.fr.kind)
	case len(fits) > 1:
		return fmt.Errorf("%w: the file reads consistently as each of %s", ErrFramingUndetected, strings.Join(fits, ", "))
	}
	var why []string
	for _, l := range r.lanes {
		switch pe := l.failure; {
		case pe != nil && pe.Field != "":
			why = append(why, fmt.Sprintf("%s fails at message %d, offset %d, field %s: %v", l.fr.kind, pe.Line, pe.Offset, pe.Field, pe.Err))
		case pe != nil:
			why = append(why, fmt.Sprintf("%s fails at message %d, offset %d: %v", l.fr.kind, pe.Line, pe.Offset, pe.Err))
		default:
			why = append(why, fmt.Sprintf("%s finds no message", l.fr.kind))
		}
	}
	return fmt.Errorf("%w: no framing reads the whole file with spec %s (%s)", ErrFramingUndetected, r.dec.name, strings.Join(why, "; "))
}
