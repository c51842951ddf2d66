package ingest

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors that callers branch on.
var (
	// ErrRejected means the file was refused whole and nothing from it was
	// written. The error's text says why, naming lines or offsets.
	ErrRejected = errors.New("ingest: file rejected")
	// ErrUnknownFormat means the format could not be told from the file and
	// was not given.
	ErrUnknownFormat = errors.New("ingest: unknown format")
)

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
	fmt.Fprintf(&b, "%s: rejected, nothing was posted", e.File)
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
