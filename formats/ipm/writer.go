package ipm

import (
	"encoding/binary"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/moov-io/iso8583/field"
)

// PDS is one private data subfield: a 4-digit tag and its value.
type PDS struct {
	Tag   string
	Value string
}

// Message is one IPM message to write: its MTI, its data elements by
// number as their exact text on the wire (no length prefixes), and its PDSs,
// which the Writer packs into DE48 and, past 999 characters, DE62 and
// DE123 to DE125. A message given PDSs must not also give those elements.
type Message struct {
	MTI    string
	Fields map[int]string
	PDS    []PDS
}

// Writer writes IPM files: VBS records, optionally 1014-blocked, in one
// encoding. Close writes the end record and fills the last block.
type Writer struct {
	w       io.Writer
	blocked bool
	cs      *charset
	fields  [maxFieldID + 1]*field.String
	pos     int   // bytes written into the current block
	n       int64 // bytes written
	err     error
	closed  bool
}

// NewWriter returns a Writer of blocked or unblocked VBS in the named
// encoding (EncodingCP500 when empty).
func NewWriter(w io.Writer, blocked bool, encoding string) (*Writer, error) {
	if encoding == "" {
		encoding = EncodingCP500
	}
	cs, ok := charsetNamed(encoding)
	if !ok {
		return nil, fmt.Errorf("%w: unknown encoding %q", ErrOptions, encoding)
	}
	wr := &Writer{w: w, blocked: blocked, cs: cs}
	s := newSpec(cs)
	for id, f := range s.Fields {
		if sf, ok := f.(*field.String); ok && id >= 2 {
			wr.fields[id] = sf
		}
	}
	return wr, nil
}

// Write writes one message.
func (wr *Writer) Write(m Message) error {
	if wr.closed {
		return fmt.Errorf("%w: write after Close", ErrOptions)
	}
	body, err := wr.pack(m)
	if err != nil {
		return err
	}
	var pre [prefixBytes]byte
	binary.BigEndian.PutUint32(pre[:], uint32(len(body)))
	wr.data(pre[:])
	wr.data(body)
	return wr.err
}

// Close writes the zero-length end record and, when blocked, fills the
// last block with EBCDIC spaces.
func (wr *Writer) Close() error {
	if wr.closed {
		return wr.err
	}
	wr.closed = true
	wr.data(make([]byte, prefixBytes))
	if wr.blocked && wr.pos > 0 {
		fill := make([]byte, blockData-wr.pos)
		for i := range fill {
			fill[i] = 0x40
		}
		wr.data(fill)
	}
	return wr.err
}

// data writes VBS bytes, inserting block trailers when blocked.
func (wr *Writer) data(p []byte) {
	for len(p) > 0 && wr.err == nil {
		if !wr.blocked {
			wr.raw(p)
			return
		}
		k := min(blockData-wr.pos, len(p))
		wr.raw(p[:k])
		p, wr.pos = p[k:], wr.pos+k
		if wr.pos == blockData {
			wr.raw([]byte{0x40, 0x40})
			wr.pos = 0
		}
	}
}

func (wr *Writer) raw(p []byte) {
	if wr.err != nil {
		return
	}
	n, err := wr.w.Write(p)
	wr.n += int64(n)
	wr.err = err
}

// pack encodes one message with the IPM spec.
func (wr *Writer) pack(m Message) ([]byte, error) {
	fields := make(map[int]string, len(m.Fields)+2)
	for id, v := range m.Fields {
		fields[id] = v
	}
	if len(m.PDS) > 0 {
		if err := packPDS(m.PDS, fields); err != nil {
			return nil, err
		}
	}
	mti, err := wr.cs.Encode([]byte(m.MTI))
	if err != nil || len(m.MTI) != 4 {
		return nil, fmt.Errorf("%w: bad MTI %q", ErrOptions, m.MTI)
	}
	ids := make([]int, 0, len(fields))
	for id := range fields {
		if id < 2 || id > 128 || wr.fields[id] == nil {
			return nil, fmt.Errorf("%w: DE%d is not an IPM element", ErrOptions, id)
		}
		ids = append(ids, id)
	}
	sort.Ints(ids)
	bitmap := make([]byte, 2*bitmapBytes)
	bitmap[0] |= 0x80 // a secondary bitmap always follows: DE71 is in it
	for _, id := range ids {
		bitmap[(id-1)/8] |= 0x80 >> ((id - 1) % 8)
	}
	out := append(mti, bitmap...)
	for _, id := range ids {
		f := field.NewInstanceOf(wr.fields[id]).(*field.String)
		f.SetValue(fields[id])
		b, err := f.Pack()
		if err != nil {
			return nil, fmt.Errorf("%w: DE%d: %v", ErrOptions, id, err)
		}
		out = append(out, b...)
	}
	return out, nil
}

// packPDS writes PDSs as "tttt lll value" into DE48 and, when they pass
// 999 characters, continues the same text in DE62, DE123, DE124, DE125.
func packPDS(pds []PDS, fields map[int]string) error {
	var b strings.Builder
	for _, p := range pds {
		n := len([]rune(p.Value))
		if len(p.Tag) != 4 || !allDigits(p.Tag) || n > 999 {
			return fmt.Errorf("%w: bad PDS %q", ErrOptions, p.Tag)
		}
		fmt.Fprintf(&b, "%s%03d%s", p.Tag, n, p.Value)
	}
	rs := []rune(b.String())
	for _, id := range pdsFields {
		if _, dup := fields[id]; dup {
			return fmt.Errorf("%w: DE%d is given as well as PDSs", ErrOptions, id)
		}
		if len(rs) == 0 {
			break
		}
		k := min(999, len(rs))
		fields[id], rs = string(rs[:k]), rs[k:]
	}
	if len(rs) > 0 {
		return fmt.Errorf("%w: the PDSs do not fit in DE48, DE62 and DE123 to DE125", ErrOptions)
	}
	return nil
}
