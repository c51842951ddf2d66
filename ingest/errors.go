package ingest

import (
	"errors"
	"fmt"
	"strings"
)

// ErrRejected means a file was refused whole: nothing from it was posted
// or imported, and only its rejected run records it. The error's text says
// why, naming lines or offsets.
var ErrRejected = errors.New("file rejected")

// maxReportedErrors bounds how many bad records one rejection lists.
const maxReportedErrors = 20

// RejectedError lists what was wrong with a rejected file.
type RejectedError struct {
	File      string
	Errs      []error // at most maxReportedErrors
	Truncated bool    // more errors were found than are listed
	// What is known of the file, for the rejected run that records it:
	// its size (0 when it could not be found or is not a regular file), its
	// SHA-256 (nil unless it was read whole, or is empty), and the format
	// it was read as and that format's default source (empty when no
	// reader was opened).
	Bytes          int64
	SHA256         []byte
	Format, Source string
}

// Reasons lists the errors one to a line, as a rejected run stores them,
// with a last line saying that more were found when they were.
func (e *RejectedError) Reasons() []string {
	out := make([]string, 0, len(e.Errs)+1)
	for _, err := range e.Errs {
		out = append(out, err.Error())
	}
	if e.Truncated {
		out = append(out, fmt.Sprintf("(more errors not shown; the first %d are listed)", len(e.Errs)))
	}
	return out
}

func (e *RejectedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: rejected, nothing from it was posted or imported", e.File)
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
