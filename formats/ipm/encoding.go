package ipm

import (
	"fmt"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// The encodings of a file's text: what Options.Encoding and
// GenerateOptions.Encoding accept.
const (
	// EncodingCP500 is EBCDIC code page 500 (International), the code page
	// of Mastercard's clearing system.
	EncodingCP500 = "cp500"
	// EncodingCP037 is EBCDIC code page 037 (US/Canada). It differs from
	// cp500 in seven characters only (! [ ] ^ | ¢ ¬), none of which can
	// appear in a key, an amount or a date.
	EncodingCP037 = "cp037"
	// EncodingLatin1 is ASCII with ISO 8859-1 for the upper half, the
	// encoding of "ASCII" IPM files.
	EncodingLatin1 = "latin1"
)

// charset maps the bytes of one code page to runes and back. Every byte is
// one character, so a field's length on the wire is its length in runes.
type charset struct {
	name   string
	ebcdic bool
	dec    [256]rune
	enc    map[rune]byte
}

var (
	cp037  = newCharset(EncodingCP037, true, func(b byte) rune { return charmap.CodePage037.DecodeByte(b) })
	cp500  = newCP500()
	latin1 = newCharset(EncodingLatin1, false, func(b byte) rune { return rune(b) })
)

func newCharset(name string, ebcdic bool, dec func(byte) rune) *charset {
	c := &charset{name: name, ebcdic: ebcdic, enc: make(map[rune]byte, 256)}
	for i := 0; i < 256; i++ {
		c.dec[i] = dec(byte(i))
	}
	c.index()
	return c
}

func (c *charset) index() {
	clear(c.enc)
	for i := 255; i >= 0; i-- {
		c.enc[c.dec[i]] = byte(i)
	}
}

// newCP500 is cp037 with the seven positions where the two differ.
// golang.org/x/text has no cp500.
func newCP500() *charset {
	c := newCharset(EncodingCP500, true, func(b byte) rune { return charmap.CodePage037.DecodeByte(b) })
	for b, r := range map[byte]rune{0x4A: '[', 0x4F: '!', 0x5A: ']', 0x5F: '^', 0xB0: '¢', 0xBA: '¬', 0xBB: '|'} {
		c.dec[b] = r
	}
	c.index()
	return c
}

// charsetNamed returns the charset of an encoding name.
func charsetNamed(name string) (*charset, bool) {
	switch name {
	case EncodingCP500:
		return cp500, true
	case EncodingCP037:
		return cp037, true
	case EncodingLatin1, "ascii":
		return latin1, true
	}
	return nil, false
}

// Encodings returns the encoding names.
func Encodings() []string { return []string{EncodingCP500, EncodingCP037, EncodingLatin1} }

// detectEBCDIC tells the encoding family from the MTI: four EBCDIC digits
// (F0-F9) or four ASCII digits. Anything else is neither.
func detectEBCDIC(mti []byte) (ebcdic, ok bool) {
	if len(mti) < 4 {
		return false, false
	}
	e, a := true, true
	for _, b := range mti[:4] {
		e = e && b >= 0xF0 && b <= 0xF9
		a = a && b >= '0' && b <= '9'
	}
	return e, e || a
}

// Encode implements moov-io/iso8583's encoding.Encoder: runes to bytes.
func (c *charset) Encode(data []byte) ([]byte, error) {
	out := make([]byte, 0, len(data))
	for len(data) > 0 {
		r, n := utf8.DecodeRune(data)
		b, ok := c.enc[r]
		if !ok || (r == utf8.RuneError && n == 1) {
			return nil, fmt.Errorf("the character %q has no %s byte", r, c.name)
		}
		out = append(out, b)
		data = data[n:]
	}
	return out, nil
}

// Decode implements moov-io/iso8583's encoding.Encoder: length bytes to
// runes, in UTF-8.
func (c *charset) Decode(data []byte, length int) ([]byte, int, error) {
	if length < 0 || len(data) < length {
		return nil, 0, fmt.Errorf("not enough data to decode: expected %d bytes, got %d", length, len(data))
	}
	out := make([]byte, 0, length)
	for _, b := range data[:length] {
		out = utf8.AppendRune(out, c.dec[b])
	}
	return out, length, nil
}
