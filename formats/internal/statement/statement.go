// Package statement holds what the bank-statement readers (formats/camt and
// formats/mt940) report in the same shape: the final error of a file that
// failed validation, and the warnings of one that was still read. Each
// reader names these types as its own (camt.FileError, mt940.Warning), so
// that its callers need not import this package; it is internal so that no
// caller can come to depend on it instead.
package statement

import (
	"fmt"
	"strings"

	"github.com/clearing-dev/clearing/formats"
)

// FileError is the final error of a file that failed validation. It counts
// the problems and names the line of the first, without repeating its text:
// a caller that continues past the ParseErrors has already shown them.
//
// It deliberately does not unwrap to the ParseError it names: a caller that
// continues past every ParseError must see this one as final.
type FileError struct {
	// Invalid is the reader's ErrInvalidFile: its text begins Error, so
	// that the message names the format, and errors.Is matches it.
	Invalid error
	First   *formats.ParseError // the first problem found
	Count   int                 // ParseErrors returned before this error
	Stopped bool                // reading ended early (a fatal error, MaxErrors)
	// NotThisFormat is true when the input is not of the reader's format at
	// all; errors.Is then matches formats.ErrNotThisFormat too.
	NotThisFormat bool
}

func (e *FileError) Error() string {
	var b strings.Builder
	if e.Invalid != nil {
		b.WriteString(e.Invalid.Error())
	} else {
		b.WriteString("file is invalid")
	}
	switch {
	case e.First != nil && e.Count > 1:
		fmt.Fprintf(&b, ": %d errors, the first on line %d", e.Count, e.First.Line)
	case e.First != nil:
		fmt.Fprintf(&b, ": 1 error, on line %d", e.First.Line)
	}
	if e.Stopped {
		b.WriteString("; reading stopped there")
	}
	return b.String()
}

// Unwrap lets errors.Is match Invalid, and formats.ErrNotThisFormat when
// NotThisFormat is set.
func (e *FileError) Unwrap() []error {
	var errs []error
	if e.Invalid != nil {
		errs = append(errs, e.Invalid)
	}
	if e.NotThisFormat {
		errs = append(errs, formats.ErrNotThisFormat)
	}
	return errs
}

// Warning is a problem that touches no amount, key or date (DESIGN
// principle 10): the file is still read, and the intake records the warning
// on the run. Code is stable, for filtering, and is one of the reader's own
// Warn constants; Message is one sentence without account numbers, names or
// free text.
type Warning struct {
	Line    int64
	Offset  int64
	Code    string
	Message string
}

func (w Warning) String() string {
	return fmt.Sprintf("line %d: %s: %s", w.Line, w.Code, w.Message)
}
