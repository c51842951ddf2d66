package stage

import (
	"errors"
	"fmt"
	"strings"
)

// ErrRejected means a file was refused whole and nothing from it was
// written. The error's text says why, naming lines or offsets.
var ErrRejected = errors.New("file rejected")

// maxReportedErrors bounds how many bad records one rejection lists.
const maxReportedErrors = 20

// RejectedError lists what was wrong with a rejected file.
type RejectedError struct {
	File      string
	Errs      []error // at most maxReportedErrors
	Truncated bool    // more errors were found than are listed
}

func (e *RejectedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: rejected, nothing was written", e.File)
	if len(e.Errs) == 1 {
		fmt.Fprintf(&b, ": %v", e.Errs[0])
		return b.String()
	}
	for _, err := range e.Errs {
		fmt.Fprintf(&b, "\n  %v", err)
	}
	if e.Truncated {
		fmt.Fprintf(&b, "\n  (more errors not shown; the first %d are listed)", len(e.Errs))
	}
	return b.String()
}

// Unwrap makes errors.Is(err, ErrRejected) true and exposes the causes.
func (e *RejectedError) Unwrap() []error { return append([]error{ErrRejected}, e.Errs...) }
