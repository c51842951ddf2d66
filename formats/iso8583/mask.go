package iso8583

import (
	"strings"
	"unicode"

	"github.com/clearing-dev/clearing/internal/pii"
)

// maxErrorText bounds the decoder text quoted in one error.
const maxErrorText = 160

// minMaskedDigits is the shortest run of digits that safeText masks. The
// shortest PANs have 8 digits; moov's own messages quote lengths and a few
// bytes of a length prefix, never that many digits in a row.
const minMaskedDigits = 8

// safeDecodeText turns an error from moov-io/iso8583 about field id into
// text fit for an error message. About a field that carries card data, the
// decoder's words are kept only when they quote nothing: no quotes and no
// run of more than three digits, which lets through "expected len 30, got
// 21" and withholds anything that could hold part of the field. The errors
// themselves are never wrapped, because moov's errors can hold the raw
// bytes they failed on.
func safeDecodeText(id int, err error) string {
	text := err.Error()
	if cardDataFields[id] && !quotesNothing(text) {
		return "the field does not decode with the spec (detail withheld: the field holds card data)"
	}
	return safeText(text)
}

func quotesNothing(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			if run++; run > 3 {
				return false
			}
		case c == '"' || c == '\'' || c == '`' || c < 0x20 || c >= 0x7f:
			return false
		default:
			run = 0
		}
	}
	return true
}

// safeText masks every run of minMaskedDigits or more digits but its last
// four, replaces control and non-ASCII characters, and bounds the length.
// It is the last guard against a wrong spec that misaligns the fields, so
// that PAN digits land in a length prefix or any other field quoted by the
// decoder.
func safeText(s string) string {
	var b strings.Builder
	run := 0
	flush := func(end int) {
		if run >= minMaskedDigits {
			b.WriteString(pii.Mask(s[end-run : end]))
		} else {
			b.WriteString(s[end-run : end])
		}
		run = 0
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= '0' && c <= '9' {
			run++
			continue
		}
		flush(i)
		if c < 0x20 || c >= 0x7f || !unicode.IsPrint(rune(c)) {
			c = '?'
		}
		b.WriteByte(c)
	}
	flush(len(s))
	out := b.String()
	if len(out) > maxErrorText {
		out = out[:maxErrorText] + "..."
	}
	return out
}
