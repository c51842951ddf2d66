package ach

import "unicode/utf8"

// span is a range [from, to) of record positions, counted from zero.
type span struct{ from, to int }

// freeTextSpans are, by record type, the fields that hold free text: names,
// descriptions, discretionary data and payment related information. No key,
// amount or account is read from them, so a character outside printable
// ASCII there (a Windows-1252 quote, a UTF-8 accent) is a warning.
var freeTextSpans = map[string][]span{
	"1":   {{40, 94}},          // destination and origin names, reference code
	"5":   {{4, 40}, {53, 69}}, // company name and discretionary data; entry description, descriptive date
	"6":   {{54, 78}},          // individual name, discretionary data
	"705": {{3, 83}},           // payment related information
	"799": {{35, 79}},          // addenda information of a return
	"702": {{12, 83}},          // terminal location, city and state
}

// freeText reads a record that holds bytes outside printable ASCII. It
// refuses any control character. It returns the record with each other such character (a valid UTF-8 sequence, or
// else one byte, as Windows-1252 has it) replaced by "?", and true when every
// one of them lies in a free-text field of its record type and the record is
// still at most 94 characters long.
func freeText(p []byte) (string, bool) {
	out := make([]byte, 0, recordLength)
	var bad []int
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRune(p[i:])
		i += size
		if r < 0x20 || r == 0x7f {
			// A control character is not a foreign letter: it means
			// binary damage, and refuses the record.
			return "", false
		}
		if r > 0x7f {
			bad = append(bad, len(out))
			out = append(out, '?')
			continue
		}
		out = append(out, byte(r))
	}
	if len(out) > recordLength || len(bad) == 0 || bad[0] < 3 {
		return "", false
	}
	key := string(out[:1])
	if key == "7" {
		key += string(out[1:3])
	}
	spans := freeTextSpans[key]
	for _, at := range bad {
		in := false
		for _, s := range spans {
			in = in || (at >= s.from && at < s.to)
		}
		if !in {
			return "", false
		}
	}
	return string(out), true
}
