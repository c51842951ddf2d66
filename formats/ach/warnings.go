package ach

import (
	"fmt"

	"github.com/clearing-dev/clearing/formats/internal/statement"
)

// Warning is a finding that touches no amount, total, count, key or date
// that enters a key (DESIGN principle 10): the file is still read and its
// money posts, and the intake records the warning on the run. Code is one of
// the Warn constants; Message carries no account number or name.
type Warning = statement.Warning

// The warning codes, one per metadata check (docs/formats/ach.md lists them).
const (
	// WarnFileHeader: a file header field that keys nothing fails
	// moov-io/ach's validation (a check digit of the immediate destination
	// or origin, a name with special characters, an odd creation time).
	WarnFileHeader = "file_header"
	// WarnPriorityCode: the file header's priority code is not "01".
	WarnPriorityCode = "priority_code"
	// WarnCreationDate: the file creation date is not a YYMMDD date.
	WarnCreationDate = "creation_date"
	// WarnBatchNumber: batch numbers do not ascend, or start at 0. A batch
	// control that numbers its batch otherwise than the header is an error
	// (ErrControl), as moov-io/ach has it.
	WarnBatchNumber = "batch_number"
	// WarnFreeText: a free-text field (names, descriptions, payment related
	// information) holds characters outside printable ASCII, such as a
	// Windows-1252 quote; they are read as "?".
	WarnFreeText = "free_text"
	// WarnTracePrefix: a return or notification of change has a trace
	// number that does not start with its batch's ODFI routing prefix, as
	// bank-made return files often do.
	WarnTracePrefix = "trace_prefix"
)

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

// warn records a metadata finding at p.
func (r *Reader) warn(p pos, code, format string, args ...any) {
	r.nwarn++
	if len(r.warnings) < maxWarnings {
		r.warnings = append(r.warnings, Warning{Line: p.line, Offset: p.off, Code: code, Message: fmt.Sprintf(format, args...)})
	}
}
