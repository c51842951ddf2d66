package bai2

import (
	"bytes"
	"fmt"

	"github.com/clearing-dev/clearing/formats"
	stmt "github.com/clearing-dev/clearing/formats/internal/statement"
)

// Warning is a finding that touches no amount, total, count, key or date
// that enters a key (DESIGN principle 10): the statement is still read and
// the intake records the warning on the run. Code is one of the Warn
// constants; Message carries no account number or free text.
type Warning = stmt.Warning

// The warning codes, one per metadata check (docs/formats/bai2.md).
const (
	// WarnRecordsOnOneLine: several slash-terminated records share one
	// physical line, or the text of a detail runs onto a line without an
	// 88 record code.
	WarnRecordsOnOneLine = "records_on_one_line"
	// WarnTrailingFields: a record ends in empty fields before its slash.
	WarnTrailingFields = "trailing_fields"
	// WarnNoSlash: the file trailer (99) has no closing slash.
	WarnNoSlash = "no_slash"
	// WarnTime: a creation or as-of time is written HH:MM or HH:MM:SS.
	WarnTime = "time_format"
	// WarnBlankTotal: an account without activity has a blank control
	// total, read as zero.
	WarnBlankTotal = "blank_total"
)

// Loosen names the money checks a known source may relax. Each one is given
// explicitly (a flag of statement import), and the intake records it on the
// run. The zero value relaxes nothing.
type Loosen struct {
	// RecordCounts accepts 49, 98 and 99 trailers whose record counts
	// differ from the records read, for a bank that counts them its own
	// way. The control totals are still checked.
	RecordCounts bool
}

// maxWarnings bounds the warnings a Reader keeps; later ones are counted.
const maxWarnings = 1000

// Warnings returns the warnings found so far, at most maxWarnings of them,
// followed by one that counts the rest.
func (r *Reader) Warnings() []Warning {
	if r.nwarn <= len(r.warnings) {
		return r.warnings
	}
	last := r.warnings[len(r.warnings)-1]
	return append(r.warnings[:len(r.warnings):len(r.warnings)], Warning{Line: last.Line, Offset: last.Offset, Code: "more",
		Message: fmt.Sprintf("%d more warning(s) not kept", r.nwarn-len(r.warnings))})
}

// warn records a metadata finding at the position pe names (its Err is
// ignored).
func (r *Reader) warn(at *formats.ParseError, code, format string, args ...any) {
	r.nwarn++
	if len(r.warnings) < maxWarnings {
		r.warnings = append(r.warnings, Warning{Line: at.Line, Offset: at.Offset, Code: code, Message: fmt.Sprintf(format, args...)})
	}
}

// clockTime reports whether f is a time written with colons, HH:MM or
// HH:MM:SS, as some banks write the creation and as-of times.
func clockTime(f []byte) bool {
	parts := bytes.Split(f, []byte(":"))
	if len(parts) < 2 || len(parts) > 3 {
		return false
	}
	for _, p := range parts {
		if len(p) != 2 || !allDigits(p) {
			return false
		}
	}
	return num2(parts[0]) <= 24 && num2(parts[1]) < 60 && (len(parts) == 2 || num2(parts[2]) < 60)
}

// timeField checks an optional HHMM time that keys nothing, warning on a
// time written with colons. It reports whether the field passed.
func (r *Reader) timeField(lr *logical, c *cursor, field, what string) bool {
	v := c.next()
	if clockTime(v) {
		r.warn(lr.errAt(c.at, field, nil), WarnTime, "%s %q is not HHMM", what, v)
		return true
	}
	if err := checkTime(v, what); err != nil {
		r.fail(lr.errAt(c.at, field, err))
		return false
	}
	return true
}
