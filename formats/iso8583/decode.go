package iso8583

import (
	"fmt"

	"github.com/moov-io/iso8583/field"
)

// maxFieldID is the highest data element a message can carry: three 64-bit
// bitmaps.
const maxFieldID = 192

// message is what the reader keeps of one decoded message: the MTI, which
// data elements are present and the exact values of those it interprets.
// One message is reused for every frame; it holds a PAN only until the next
// decode.
type message struct {
	mti    string
	has    [maxFieldID + 1]bool
	values [maxFieldID + 1]string
}

func (m *message) get(id int) (string, bool) { return m.values[id], m.has[id] }

// decoder decodes messages with a spec's exact twin. It walks the bitmap
// itself instead of calling moov's Message.Unpack, for two reasons: Unpack
// does not say how many bytes it consumed, so bytes left over after the
// last field would pass unnoticed, and its errors carry the raw message,
// PAN included.
type decoder struct {
	name   string // the spec's name, for messages
	mti    field.Field
	bitmap *field.Bitmap
	// proto holds the spec's fields by number (arrays, not the spec's map:
	// lookups are on the hot path); reuse holds one instance of each String
	// field, whose Unpack overwrites all its state.
	proto [maxFieldID + 1]field.Field
	reuse [maxFieldID + 1]field.Field
}

func newDecoder(s *Spec) *decoder {
	d := &decoder{name: s.name}
	d.mti = field.NewInstanceOf(s.exact.Fields[0])
	d.bitmap = field.NewBitmap(s.exact.Fields[1].Spec())
	for id, f := range s.exact.Fields {
		if id < 2 || id > maxFieldID {
			continue
		}
		d.proto[id] = f
		if _, ok := f.(*field.String); ok {
			d.reuse[id] = field.NewInstanceOf(f)
		}
	}
	return d
}

// decodeError says which field failed to decode and why, in words that are
// safe to show: see safeDecodeText.
type decodeError struct {
	field int // -1 for the message as a whole
	text  string
}

func (e *decodeError) fieldName() string {
	switch e.field {
	case -1:
		return ""
	case 0:
		return "MTI"
	case 1:
		return "bitmap"
	}
	return fmt.Sprintf("DE%d", e.field)
}

// decode fills m from body. A panic inside the decoder on hostile input is
// turned into an error about the message: the file is rejected, the run
// goes on to report the rest.
func (d *decoder) decode(body []byte, m *message) (derr *decodeError) {
	defer func() {
		if p := recover(); p != nil {
			derr = &decodeError{field: -1, text: "the decoder failed on this message"}
		}
	}()
	m.mti = ""
	clear(m.has[:])
	n, err := d.mti.Unpack(body)
	if err != nil {
		return &decodeError{field: 0, text: safeDecodeText(0, err)}
	}
	if m.mti, err = d.mti.String(); err != nil {
		return &decodeError{field: 0, text: safeDecodeText(0, err)}
	}
	if len(m.mti) != 4 || !allDigits(m.mti) {
		// The MTI is n 4 in every version of the standard; checking it here
		// keeps a framing that cuts in the wrong place from passing as
		// consistent.
		return &decodeError{field: 0, text: "the MTI is not four digits"}
	}
	off := n
	if n, err = d.bitmap.Unpack(body[off:]); err != nil {
		return &decodeError{field: 1, text: safeDecodeText(1, err)}
	}
	off += n
	last := 1
	for id := 2; id <= d.bitmap.Len(); id++ {
		if !d.bitmap.IsSet(id) || d.bitmap.IsBitmapPresenceBit(id) {
			continue
		}
		if id > maxFieldID || d.proto[id] == nil {
			return &decodeError{field: id, text: "the field is present but the spec does not define it"}
		}
		f := d.reuse[id]
		if f == nil {
			f = field.NewInstanceOf(d.proto[id])
		}
		if n, err = f.Unpack(body[off:]); err != nil {
			return &decodeError{field: id, text: safeDecodeText(id, err)}
		}
		if isUsed[id] {
			if m.values[id], err = fieldText(id, f); err != nil {
				return &decodeError{field: id, text: safeDecodeText(id, err)}
			}
		}
		m.has[id] = true
		off += n
		last = id
	}
	if off != len(body) {
		return &decodeError{field: -1, text: fmt.Sprintf(
			"%d bytes are left over after the last field (%s); the spec or the framing does not fit",
			len(body)-off, (&decodeError{field: last}).fieldName())}
	}
	return nil
}

// fieldText returns the value the reader interprets: the exact string of a
// String field, or the PAN of a moov Track2 field.
func fieldText(id int, f field.Field) (string, error) {
	if t, ok := f.(*field.Track2); ok && id == fieldTrack2 {
		return t.PrimaryAccountNumber, nil
	}
	return f.String()
}
