package ipm

import "errors"

// Sentinel errors that callers branch on. Errors about one message are
// *formats.ParseError values that wrap one of them; ErrFramingUndetected
// and ErrOptions are final.
var (
	// ErrFraming means the records cannot be cut: a length prefix out of
	// range, data after the end record, a bad block fill.
	ErrFraming = errors.New("ipm: framing error")
	// ErrTruncated means the file ends before its end record: inside a
	// length prefix, inside a record, or after a complete record with no
	// zero-length record to end the data.
	ErrTruncated = errors.New("ipm: the file is truncated")
	// ErrDecode means a record does not decode as an IPM message: an MTI
	// that is not four digits in the file's encoding, a field whose length
	// does not fit, an undefined field, bytes left over after the last
	// field.
	ErrDecode = errors.New("ipm: message does not decode")
	// ErrPDS means the private data subfields of a message do not split:
	// a tag or length that is not digits, a length past the end, a tag
	// given twice.
	ErrPDS = errors.New("ipm: bad private data subfield")
	// ErrControl means a logical file does not agree with its trailer (the
	// PDS0306 message count or the PDS0301 amount check total), a trailer
	// or header is missing, or a message lies outside a logical file.
	ErrControl = errors.New("ipm: logical file control failed")
	// ErrInvalid means a message decoded but cannot be posted safely: an
	// unknown MTI or function code, a missing or malformed ARN or a bad
	// ARN check digit, a non-numeric amount, an unknown currency or an
	// exponent that contradicts ISO 4217.
	ErrInvalid = errors.New("ipm: invalid message")
	// ErrFramingUndetected means the file reads whole neither as blocked
	// nor as unblocked VBS, or reads whole as both.
	ErrFramingUndetected = errors.New("ipm: cannot tell whether the file is 1014-blocked")
	// ErrOptions means the reader or generator options are not usable.
	ErrOptions = errors.New("ipm: invalid options")
)
