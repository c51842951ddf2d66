package statement

import (
	"fmt"
	"strings"
)

// KeySegment escapes a bank's value for a key: '%', ':', '~', spaces,
// control bytes and non-ASCII become %XX, and a leading '#' too, so that no
// value is confused with a separator or a positional segment.
func KeySegment(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= 0x20 || c >= 0x7f || c == '%' || c == ':' || c == '~' || (i == 0 && c == '#') {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// IBANChecksum reports whether an IBAN, already checked for its shape
// (country letters, two check digits, upper-case letters and digits), has
// valid mod-97 check digits.
func IBANChecksum(s string) bool {
	r := s[4:] + s[:4]
	m := 0
	for i := 0; i < len(r); i++ {
		c := r[i]
		if c >= '0' && c <= '9' {
			m = (m*10 + int(c-'0')) % 97
		} else {
			m = (m*100 + int(c-'A'+10)) % 97
		}
	}
	return m == 1
}
