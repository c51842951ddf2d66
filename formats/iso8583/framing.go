package iso8583

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"github.com/clearing-dev/clearing/formats"
)

// The framings: how the messages of a file are cut apart.
const (
	// FramingRDW prefixes each message with a 4-byte record descriptor word
	// holding its length (the RDW excluded) as a big-endian integer, as in
	// Mastercard IPM-style clearing files. A final all-zero RDW, as some
	// writers append, ends the file.
	FramingRDW = "rdw"
	// FramingLen2 prefixes each message with its length as a 2-byte
	// big-endian integer.
	FramingLen2 = "len2"
	// FramingASCII4 prefixes each message with its length as 4 ASCII digits.
	FramingASCII4 = "ascii4"
	// FramingHex writes one message per line, hex-encoded (either case).
	// Blank lines are ignored, and a line may end in CR LF.
	FramingHex = "hex"
	// FramingRaw is a file that holds exactly one message and nothing else.
	FramingRaw = "raw"
)

// Framings returns the framing names in the order detection tries them.
func Framings() []string {
	return []string{FramingRDW, FramingLen2, FramingASCII4, FramingHex, FramingRaw}
}

func knownFraming(name string) bool {
	for _, f := range Framings() {
		if f == name {
			return true
		}
	}
	return false
}

// frame is one message cut from the stream, or the reason it could not be.
type frame struct {
	index  int64 // 1-based message number
	offset int64 // offset of the frame's first byte (its length prefix)
	body   []byte
	err    *formats.ParseError
}

// framer cuts a stream into frames. It is fed the stream in pieces of any
// size, so that several framings can be tried on one pass over a stream
// that cannot be read twice; a frame's body is only valid during the emit
// call that hands it over. It buffers at most one message.
type framer struct {
	kind    string
	maxBody int   // largest message, in bytes
	off     int64 // offset of the next byte fed
	index   int64 // messages begun so far
	start   int64 // offset of the message being read
	dead    bool  // no frame will follow: a fatal framing error, or the end

	hdr     []byte
	need    int    // body bytes of the current message; -1 while reading a prefix
	buf     []byte // the body (or hex line) when it spans pieces
	decoded []byte // the bytes of a hex line
	skip    bool   // discarding the rest of an over-long hex line
	zeroRDW bool   // an all-zero RDW was read: only the end of the file may follow
}

func newFramer(kind string, maxBody int) *framer {
	return &framer{kind: kind, maxBody: maxBody, need: -1}
}

func (f *framer) prefixLen() int {
	switch f.kind {
	case FramingRDW, FramingASCII4:
		return 4
	case FramingLen2:
		return 2
	}
	return 0
}

// fail emits a framing error about the current message. A fatal one stops
// the framer: nothing after it can be found.
func (f *framer) fail(emit func(frame), fatal bool, format string, args ...any) {
	f.emitErr(emit, fatal, fmt.Errorf("%w: %s: %s", ErrFraming, f.kind, fmt.Sprintf(format, args...)))
}

// failLimit is fail for a message past a limit; its error also matches
// formats.ErrTooLarge.
func (f *framer) failLimit(emit func(frame), fatal bool, format string, args ...any) {
	f.emitErr(emit, fatal, fmt.Errorf("%w: %s: %s (%w)", ErrFraming, f.kind, fmt.Sprintf(format, args...), formats.ErrTooLarge))
}

func (f *framer) emitErr(emit func(frame), fatal bool, err error) {
	if fatal {
		f.dead = true
	}
	emit(frame{index: f.index, offset: f.start, err: &formats.ParseError{Line: f.index, Offset: f.start, Err: err}})
}

// feed consumes the next piece of the stream.
func (f *framer) feed(p []byte, emit func(frame)) {
	switch f.kind {
	case FramingHex:
		f.feedHex(p, emit)
	case FramingRaw:
		f.feedRaw(p, emit)
	default:
		f.feedPrefixed(p, emit)
	}
}

// finish tells the framer that the stream has ended.
func (f *framer) finish(emit func(frame)) {
	if f.dead {
		return
	}
	switch f.kind {
	case FramingHex:
		if !f.skip && len(f.buf) > 0 {
			f.line(f.buf, emit)
		}
		f.buf = f.buf[:0]
	case FramingRaw:
		f.index, f.start = 1, 0
		if len(f.buf) == 0 {
			f.fail(emit, true, "the file is empty")
			return
		}
		emit(frame{index: 1, offset: 0, body: f.buf})
	default:
		if len(f.hdr) > 0 {
			f.fail(emit, true, "the file ends inside a length prefix (%d of %d bytes)", len(f.hdr), f.prefixLen())
		} else if f.need >= 0 {
			f.fail(emit, true, "the message announces %d bytes but the file ends after %d", f.need, len(f.buf))
		}
	}
	f.dead = true
}

func (f *framer) feedPrefixed(p []byte, emit func(frame)) {
	for len(p) > 0 && !f.dead {
		if f.need < 0 {
			if f.zeroRDW {
				f.index++
				f.fail(emit, true, "a zero-length RDW, which ends a file, is followed by more data")
				return
			}
			if len(f.hdr) == 0 {
				f.index++
				f.start = f.off
			}
			k := min(f.prefixLen()-len(f.hdr), len(p))
			f.hdr = append(f.hdr, p[:k]...)
			p, f.off = p[k:], f.off+int64(k)
			if len(f.hdr) < f.prefixLen() {
				return
			}
			f.startBody(emit)
			continue
		}
		if len(f.buf) == 0 && len(p) >= f.need {
			body := p[:f.need]
			p, f.off, f.need = p[f.need:], f.off+int64(f.need), -1
			emit(frame{index: f.index, offset: f.start, body: body})
			continue
		}
		k := min(f.need-len(f.buf), len(p))
		f.buf = append(f.buf, p[:k]...)
		p, f.off = p[k:], f.off+int64(k)
		if len(f.buf) == f.need {
			f.need = -1
			emit(frame{index: f.index, offset: f.start, body: f.buf})
			f.buf = f.buf[:0]
		}
	}
}

// startBody interprets a complete length prefix.
func (f *framer) startBody(emit func(frame)) {
	var n int
	switch f.kind {
	case FramingRDW:
		n32 := binary.BigEndian.Uint32(f.hdr)
		if uint64(n32) > uint64(f.maxBody) {
			f.hdr = f.hdr[:0]
			f.failLimit(emit, true, "the RDW announces %d bytes, more than the limit of %d", n32, f.maxBody)
			return
		}
		n = int(n32)
	case FramingLen2:
		n = int(binary.BigEndian.Uint16(f.hdr))
	case FramingASCII4:
		for _, c := range f.hdr {
			if c < '0' || c > '9' {
				f.hdr = f.hdr[:0]
				f.fail(emit, true, "the length prefix is not 4 ASCII digits")
				return
			}
			n = n*10 + int(c-'0')
		}
	}
	f.hdr = f.hdr[:0]
	switch {
	case n == 0 && f.kind == FramingRDW:
		f.zeroRDW = true
		f.index--
	case n == 0:
		// Nothing frames an empty message; a zero length means the framing
		// is wrong or the file is damaged, and what follows cannot be
		// trusted to be in step.
		f.fail(emit, true, "a zero-length message")
	case n > f.maxBody:
		f.failLimit(emit, true, "the prefix announces %d bytes, more than the limit of %d", n, f.maxBody)
	default:
		f.need = n
	}
}

func (f *framer) maxLine() int { return 2*f.maxBody + 64 }

func (f *framer) feedHex(p []byte, emit func(frame)) {
	for len(p) > 0 {
		if len(f.buf) == 0 && !f.skip {
			f.start = f.off
		}
		end, nl := bytes.IndexByte(p, '\n'), true
		if end < 0 {
			end, nl = len(p), false
		}
		part := p[:end]
		used := end
		if nl {
			used++
		}
		p, f.off = p[used:], f.off+int64(used)
		switch {
		case f.skip:
		case len(f.buf)+len(part) > f.maxLine():
			f.index++
			f.buf = f.buf[:0]
			f.skip = true
			f.failLimit(emit, false, "a line longer than %d characters", f.maxLine())
		case nl && len(f.buf) == 0:
			f.line(part, emit)
		default:
			f.buf = append(f.buf, part...)
			if nl {
				f.line(f.buf, emit)
				f.buf = f.buf[:0]
			}
		}
		if nl {
			f.skip = false
		}
	}
}

// line decodes one hex line; blank lines are not messages.
func (f *framer) line(s []byte, emit func(frame)) {
	s = trimSpace(s)
	if len(s) == 0 {
		return
	}
	f.index++
	if len(s)%2 != 0 {
		f.fail(emit, false, "an odd number of hex digits")
		return
	}
	if cap(f.decoded) < len(s)/2 {
		f.decoded = make([]byte, len(s)/2)
	}
	f.decoded = f.decoded[:len(s)/2]
	if _, err := hex.Decode(f.decoded, s); err != nil {
		f.fail(emit, false, "a character that is not a hex digit")
		return
	}
	emit(frame{index: f.index, offset: f.start, body: f.decoded})
}

func trimSpace(s []byte) []byte {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	return s
}

func (f *framer) feedRaw(p []byte, emit func(frame)) {
	if f.dead {
		return
	}
	if len(f.buf)+len(p) > f.maxBody {
		f.index, f.start = 1, 0
		f.failLimit(emit, true, "the file is larger than the %d-byte limit of one message", f.maxBody)
		f.buf = nil
		return
	}
	f.buf = append(f.buf, p...)
	f.off += int64(len(p))
}
