package iso8583

import "errors"

// Sentinel errors that callers branch on. Errors about one message are
// *formats.ParseError values that wrap one of ErrFraming, ErrDecode or
// ErrInvalid; the others are final.
var (
	// ErrFraming means the bytes around a message do not frame it: a bad or
	// out-of-range length prefix, a truncated message, a line that is not
	// hex.
	ErrFraming = errors.New("iso8583: framing error")
	// ErrDecode means the spec cannot decode a message: a field's length
	// prefix or encoding does not fit, a field the spec does not define is
	// present, or bytes are left over after the last field.
	ErrDecode = errors.New("iso8583: message does not decode with the spec")
	// ErrInvalid means a message decoded but what it says cannot be right
	// or cannot be posted safely: an unknown MTI, a non-numeric amount, an
	// unknown currency, an impossible date, a missing RRN, an unknown
	// processing code. A wrong spec often decodes garbage without an error;
	// these checks are what catch it.
	ErrInvalid = errors.New("iso8583: invalid message")
	// ErrFramingUndetected means that no framing was given and the file
	// does not read consistently under exactly one framing. The error names
	// the candidates, or why each framing failed; the caller must choose
	// one (--iso-framing).
	ErrFramingUndetected = errors.New("iso8583: cannot tell the framing of the file; choose one with --iso-framing")
	// ErrStopped means the reader cannot find the messages after an earlier
	// framing error; it is the final error after that error's ParseError.
	ErrStopped = errors.New("iso8583: reading stopped after a framing error")
	// ErrSpec means a spec could not be loaded or lacks what the reader
	// needs.
	ErrSpec = errors.New("iso8583: unusable spec")
	// ErrOptions means the reader or generator options are not usable.
	ErrOptions = errors.New("iso8583: invalid options")
	// ErrRawHoldsOne is returned when a second message is written to a
	// Writer of the raw framing.
	ErrRawHoldsOne = errors.New("iso8583: a raw file holds exactly one message")
)
