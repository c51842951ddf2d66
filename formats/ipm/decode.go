package ipm

import (
	"fmt"

	"github.com/moov-io/iso8583/field"
)

// maxFieldID is the highest data element: a primary, secondary and
// tertiary bitmap.
const maxFieldID = 192

// message is one decoded IPM message: its MTI and the exact text of every
// data element present. One message is reused for every record; it holds
// a PAN only until the next decode.
type message struct {
	mti    string
	has    [maxFieldID + 1]bool
	values [maxFieldID + 1]string
	pds    pdsSet
}

func (m *message) get(id int) (string, bool) { return m.values[id], m.has[id] }

// decoder decodes messages of one encoding with the IPM spec. It walks the
// bitmap itself instead of calling moov's Message.Unpack, because Unpack
// does not say how many bytes it consumed (bytes left over after the last
// field would pass unnoticed) and its errors can carry the raw message, PAN
// included.
type decoder struct {
	cs     *charset
	mti    field.Field
	bitmap *field.Bitmap
	fields [maxFieldID + 1]field.Field
}

func newDecoder(cs *charset) *decoder {
	s := newSpec(cs)
	d := &decoder{cs: cs}
	d.mti = field.NewInstanceOf(s.Fields[0])
	d.bitmap = field.NewBitmap(s.Fields[1].Spec())
	for id, f := range s.Fields {
		if id >= 2 && id <= maxFieldID {
			d.fields[id] = field.NewInstanceOf(f)
		}
	}
	return d
}

// decodeError names the field that failed to decode, in words that never
// quote a PAN.
type decodeError struct {
	field string
	text  string
}

func deName(id int) string { return fmt.Sprintf("DE%d", id) }

// decode fills m from body. A panic inside moov on hostile input becomes an
// error about the message.
func (d *decoder) decode(body []byte, m *message) (derr *decodeError) {
	defer func() {
		if p := recover(); p != nil {
			derr = &decodeError{text: "the decoder failed on this record"}
		}
	}()
	m.mti = ""
	clear(m.has[:])
	m.pds.reset()
	if e, ok := detectEBCDIC(body); !ok || e != d.cs.ebcdic {
		return &decodeError{field: "MTI", text: fmt.Sprintf("the MTI is not four digits in %s", d.cs.name)}
	}
	n, err := d.mti.Unpack(body)
	if err != nil {
		return &decodeError{field: "MTI", text: err.Error()}
	}
	if m.mti, err = d.mti.String(); err != nil {
		return &decodeError{field: "MTI", text: err.Error()}
	}
	off := n
	if len(body)-off < bitmapBytes {
		return &decodeError{field: "bitmap", text: "the record ends inside the bitmap"}
	}
	if n, err = d.bitmap.Unpack(body[off:]); err != nil {
		return &decodeError{field: "bitmap", text: "the record ends inside the bitmap"}
	}
	off += n
	last := "bitmap"
	for id := 2; id <= d.bitmap.Len(); id++ {
		if !d.bitmap.IsSet(id) || d.bitmap.IsBitmapPresenceBit(id) {
			continue
		}
		f := d.fields[id]
		if id > maxFieldID || f == nil {
			return &decodeError{field: deName(id), text: "the element is present but IPM does not define it"}
		}
		if n, err = f.Unpack(body[off:]); err != nil {
			return &decodeError{field: deName(id), text: safeText(id, err)}
		}
		if m.values[id], err = f.String(); err != nil {
			return &decodeError{field: deName(id), text: safeText(id, err)}
		}
		m.has[id] = true
		off += n
		last = deName(id)
	}
	if off != len(body) {
		return &decodeError{text: fmt.Sprintf("%d bytes are left over after the last element (%s)", len(body)-off, last)}
	}
	return nil
}

// safeText is moov's error for a field, except for the PAN, whose error
// could quote digits.
func safeText(id int, err error) string {
	if id == 2 {
		return "the PAN does not decode"
	}
	return err.Error()
}
