package ach

import "errors"

// Sentinel errors that callers branch on. A *formats.ParseError from the
// Reader wraps exactly one of the first seven; the last two are final errors.
var (
	// ErrNotText means a line holds a byte outside printable ASCII: a
	// control character, or any byte of 0x7f and above.
	ErrNotText = errors.New("ach: line is not printable text")
	// ErrLineLength means a line is not a 94-character record: characters
	// other than spaces follow a record on the same line.
	ErrLineLength = errors.New("ach: line is not a 94-character record")
	// ErrStructure means a record is out of place: a missing or repeated file
	// header or control, an entry outside a batch, an addenda the entry did
	// not announce, anything but filler after the file control.
	ErrStructure = errors.New("ach: record out of place")
	// ErrField means a field fails validation: a non-numeric amount, an
	// unknown code, a bad check digit, a rule of the entry's SEC code.
	ErrField = errors.New("ach: invalid field")
	// ErrControl means a batch or file control record does not match the
	// records it totals (counts, entry hash, debit and credit totals) or the
	// header it closes.
	ErrControl = errors.New("ach: control record does not match")
	// ErrTruncated means the file ends before a batch control or the file
	// control.
	ErrTruncated = errors.New("ach: file ends early")
	// ErrUnsupported means a record is valid NACHA but has no defined mapping
	// to a formats.Record, such as an addenda on an ADV entry.
	ErrUnsupported = errors.New("ach: record not supported")

	// ErrInvalidFile is the final error of a Reader that has returned at
	// least one *formats.ParseError: the file as a whole is rejected and
	// nothing read from it may be posted.
	ErrInvalidFile = errors.New("ach: file rejected")
	// ErrNoHasher means Options.Hasher is the zero pii.Hasher, which would
	// hash account numbers with an empty key.
	ErrNoHasher = errors.New("ach: Options.Hasher is not set")
)
