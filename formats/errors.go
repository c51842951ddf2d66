package formats

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors that callers branch on.
var (
	// ErrTooLarge means a file, line or record count went past a limit.
	ErrTooLarge = errors.New("formats: input exceeds a limit")
	// ErrAmountTooLarge means a record's amount is above MaxAmountMinor.
	ErrAmountTooLarge = errors.New("formats: amount above the limit")
	// ErrNotThisFormat means the input is not of the format it was read as.
	ErrNotThisFormat = errors.New("formats: input is not of this format")
)

// ParseError names one bad record: where it is and what is wrong with it. Its
// message never contains an account number or PAN.
type ParseError struct {
	Line   int64  // 1-based line or message index; 0 when unknown
	Offset int64  // byte offset of the record; -1 when unknown
	Field  string // the field at fault, when there is one
	Err    error
}

func (e *ParseError) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d", e.Line)
	}
	if e.Offset >= 0 {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "offset %d", e.Offset)
	}
	if e.Field != "" {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "field %s", e.Field)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *ParseError) Unwrap() error { return e.Err }

// Limits bound what a reader accepts. A zero field takes its default.
type Limits struct {
	MaxLineBytes int   // longest line (text formats) or message (binary)
	MaxRecords   int64 // most records in one file
}

// Default limits.
const (
	DefaultMaxLineBytes = 64 << 10
	DefaultMaxRecords   = 50_000_000
)

// WithDefaults returns l with every zero field set to its default.
func (l Limits) WithDefaults() Limits {
	if l.MaxLineBytes <= 0 {
		l.MaxLineBytes = DefaultMaxLineBytes
	}
	if l.MaxRecords <= 0 {
		l.MaxRecords = DefaultMaxRecords
	}
	return l
}
