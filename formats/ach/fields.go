package ach

import (
	"strconv"
	"strings"
	"time"

	"github.com/clearing-dev/clearing/formats"
)

// recordLength is the number of characters in every NACHA record.
const recordLength = 94

// record is one 94-character NACHA record and where it starts in the file.
// Only chunks of printable ASCII become records, so characters and bytes
// are the same positions.
type record struct {
	text string // exactly recordLength characters, right-padded with spaces
	line int64  // 1-based physical line of the first byte
	off  int64  // byte offset of the first byte
}

// field returns the characters [from, to) of the record, counted from zero,
// so that NACHA position p..q (1-based, inclusive) is field(p-1, q).
func (rc *record) field(from, to int) string { return rc.text[from:to] }

// isDigits reports whether s is non-empty and made only of ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// number parses a zero-padded unsigned numeric field. Unlike moov-io/ach's
// parsers, which read "00001X0000" or "+000000050" as a number or as zero
// without complaint, it accepts digits only: an amount or a count that is not
// a number is an error, never a silent zero.
func number(s string) (int64, bool) {
	if !isDigits(s) {
		return 0, false
	}
	// ADV totals are 20 digits wide; their leading zeros carry nothing, and
	// a value beyond 18 digits is beyond any real total.
	s = strings.TrimLeft(s, "0")
	if s == "" {
		return 0, true
	}
	if len(s) > 18 {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// parseDate parses a YYMMDD field as a calendar date at UTC midnight. Every
// two-digit year is taken to be in 2000-2099: NACHA files name dates close to
// the day they are made, and one fixed rule keeps keys stable.
func parseDate(s string) (time.Time, bool) {
	if len(s) != 6 || !isDigits(s) {
		return time.Time{}, false
	}
	y, _ := strconv.Atoi(s[0:2])
	m, _ := strconv.Atoi(s[2:4])
	d, _ := strconv.Atoi(s[4:6])
	if m < 1 || m > 12 || d < 1 {
		return time.Time{}, false
	}
	t := formats.Date(2000+y, time.Month(m), d)
	if t.Day() != d {
		return time.Time{}, false // such as 310231, which time.Date would roll into March
	}
	return t, true
}

// dateAbsent reports whether a YYMMDD field holds no date at all: all zeros
// or all spaces, which return and notification-of-change batches often carry.
func dateAbsent(s string) bool {
	return strings.Trim(s, "0") == "" || strings.TrimSpace(s) == ""
}

// noDateKey is the date segment of the key of an entry whose batch carries
// no effective entry date (see docs/formats/ach.md, "Effective entry date").
const noDateKey = "0000-00-00"

// Key returns the natural key of an ACH entry (DESIGN §4):
// "ach:<company identification>:<effective entry date>:<trace number>". The
// company identification is trimmed of spaces; the date is written
// YYYY-MM-DD. The generator and the Reader both derive keys through it.
func Key(companyID string, effective time.Time, trace string) string {
	return keyWithDate(companyID, effective.Format(time.DateOnly), trace)
}

func keyWithDate(companyID, date, trace string) string {
	return KeyPrefix(companyID) + date + ":" + trace
}

// KeyPrefix returns "ach:<company identification>:", the part of a key that
// a return or notice shares with its original and that Link.KeyPrefix holds.
func KeyPrefix(companyID string) string {
	return "ach:" + strings.TrimSpace(companyID) + ":"
}

// checkDigit returns the ABA check digit of an 8-digit routing prefix, or -1
// when the prefix is not 8 digits.
func checkDigit(prefix8 string) int {
	if len(prefix8) != 8 || !isDigits(prefix8) {
		return -1
	}
	weights := [8]int{3, 7, 1, 3, 7, 1, 3, 7}
	sum := 0
	for i := 0; i < 8; i++ {
		sum += int(prefix8[i]-'0') * weights[i]
	}
	return (10 - sum%10) % 10
}

// routing9 returns the 9-digit routing number for an 8-digit prefix.
func routing9(prefix8 string) string {
	return prefix8 + strconv.Itoa(checkDigit(prefix8))
}

// printableASCII reports whether every byte of p is a printable ASCII
// character (space to tilde).
func printableASCII(p []byte) bool {
	for _, b := range p {
		if b < 0x20 || b > 0x7e {
			return false
		}
	}
	return true
}
