package ipm

import (
	"encoding/binary"
	"fmt"
)

// prefixBytes is the length of a VBS record's length prefix.
const prefixBytes = 4

// frame is one record cut from the stream, or why it could not be.
type frame struct {
	index int64 // 1-based record number
	off   int64 // offset of its length prefix in the VBS stream
	body  []byte
	err   error // ErrFraming or ErrTruncated, wrapped
}

// vbsFramer cuts a VBS stream (4-byte big-endian lengths that do not count
// themselves, a zero length at the end) into records. It is fed the stream
// in pieces of any size, so that several framings can read one pass of a
// stream that cannot be read twice; a frame's body is valid only during the
// emit call that hands it over. It buffers at most one record.
type vbsFramer struct {
	maxBody int
	// fill reports whether a byte may follow the end record: never in an
	// unblocked file, block fill in a blocked one.
	fill func(byte) bool

	off   int64 // VBS offset of the next byte fed
	index int64 // records begun so far, the end record excluded
	start int64 // offset of the record being read
	hdr   [prefixBytes]byte
	nhdr  int
	need  int // body bytes of the current record; -1 while reading a prefix
	buf   []byte
	ended bool // the zero-length record was read
	dead  bool // no frame will follow
}

func newVBSFramer(maxBody int, fill func(byte) bool) *vbsFramer {
	return &vbsFramer{maxBody: maxBody, fill: fill, need: -1}
}

func (f *vbsFramer) fail(emit func(frame), kind error, format string, args ...any) {
	f.dead = true
	emit(frame{index: f.index, off: f.start, err: fmt.Errorf("%w: %s", kind, fmt.Sprintf(format, args...))})
}

// feed consumes the next piece of the stream.
func (f *vbsFramer) feed(p []byte, emit func(frame)) {
	for len(p) > 0 && !f.dead {
		if f.ended {
			for i, b := range p {
				if !f.fill(b) {
					f.index++
					f.start = f.off + int64(i)
					f.fail(emit, ErrFraming, "data after the zero-length record that ends the file")
					return
				}
			}
			f.off += int64(len(p))
			return
		}
		if f.need < 0 {
			if f.nhdr == 0 {
				f.start = f.off
			}
			k := copy(f.hdr[f.nhdr:], p)
			f.nhdr += k
			p, f.off = p[k:], f.off+int64(k)
			if f.nhdr < prefixBytes {
				return
			}
			f.nhdr = 0
			n := binary.BigEndian.Uint32(f.hdr[:])
			switch {
			case n == 0:
				f.ended = true
				continue
			case n > uint32(f.maxBody):
				f.index++
				f.fail(emit, ErrFraming, "the record length %d is out of range (at most %d)", n, f.maxBody)
				return
			}
			f.index++
			f.need = int(n)
			continue
		}
		if len(f.buf) == 0 && len(p) >= f.need {
			body := p[:f.need]
			p, f.off, f.need = p[f.need:], f.off+int64(f.need), -1
			emit(frame{index: f.index, off: f.start, body: body})
			continue
		}
		k := min(f.need-len(f.buf), len(p))
		f.buf = append(f.buf, p[:k]...)
		p, f.off = p[k:], f.off+int64(k)
		if len(f.buf) == f.need {
			f.need = -1
			emit(frame{index: f.index, off: f.start, body: f.buf})
			f.buf = f.buf[:0]
		}
	}
}

// finish tells the framer that the stream has ended.
func (f *vbsFramer) finish(emit func(frame)) {
	if f.dead {
		return
	}
	switch {
	case f.ended:
	case f.nhdr > 0:
		f.index++
		f.fail(emit, ErrTruncated, "the file ends inside a record's length prefix (%d of 4 bytes)", f.nhdr)
	case f.need >= 0:
		f.fail(emit, ErrTruncated, "the record announces %d bytes but the file ends after %d", f.need, len(f.buf))
	default:
		f.index++
		f.start = f.off
		f.fail(emit, ErrTruncated, "the file ends without the zero-length record that ends IPM data")
	}
	f.dead = true
}
