package mt940

import (
	"errors"

	"github.com/clearing-dev/clearing/formats/internal/statement"
)

// Sentinel errors that callers branch on. Each *formats.ParseError the
// reader returns wraps one of them.
var (
	// ErrStructure means a field out of place or missing: a statement line
	// before the opening balance, a second :25:, a message without its
	// closing balance.
	ErrStructure = errors.New("mt940: field out of place or missing")
	// ErrField means a field whose content is not valid: an impossible date,
	// a debit/credit mark that MT940 does not define.
	ErrField = errors.New("mt940: invalid field")
	// ErrAmount means an amount that is not valid for its currency: an
	// unknown currency or XXX, more decimals than the currency has.
	ErrAmount = errors.New("mt940: invalid amount")
	// ErrInvalidFile is the final verdict on a file that produced at least
	// one ParseError. It is returned by Next in place of io.EOF.
	ErrInvalidFile = errors.New("mt940: file is invalid")
	// ErrNoHasher means Options.Hasher was left at its zero value.
	ErrNoHasher = errors.New("mt940: Options.Hasher is not set")
	// ErrInvalidLine means the generator was given a line it cannot write.
	ErrInvalidLine = errors.New("mt940: line cannot be written")
)

// FileError is the final error of a file that failed validation: it counts
// the problems and names the line of the first, without repeating its text
// ("mt940: file is invalid: 3 errors, the first on line 5"). Its Invalid
// is ErrInvalidFile, and NotThisFormat is set when the input holds no MT940
// or MT942 field at all. Like bai2.FileError it does not unwrap to the
// ParseError it names.
type FileError = statement.FileError

// Warning is a problem that touches no amount, key or date: the file is
// still read, and the intake records the warning on the run. Its Code is
// one of the Warn constants below.
type Warning = statement.Warning

// The warning codes.
const (
	// WarnUnbalanced: opening balance plus entries differs from the closing
	// balance (MT940), or the :90D:/:90C: totals differ from the entries
	// (MT942). Reconciliation reports it as a statement_unbalanced break.
	WarnUnbalanced = "statement_unbalanced"
	// WarnText: a line outside any field, such as a bank's own header or
	// ":940:", ignored.
	WarnText = "text_outside_field"
	// WarnControl: control bytes (SOH, ETX, ...) removed from a line.
	WarnControl = "control_bytes"
	// WarnTag: a field tag the reader does not use, ignored.
	WarnTag = "unknown_tag"
	// WarnAmountComma: an amount without a decimal comma, read as whole
	// units of its currency.
	WarnAmountComma = "amount_without_comma"
	// WarnEncoding: text that is not UTF-8, read as ISO-8859-1.
	WarnEncoding = "encoding_assumed"
	// WarnMissing: a field that identifies nothing money depends on, such
	// as :20:, is missing.
	WarnMissing = "field_missing"
	// WarnBalance: a :64: or :65: balance that cannot be read; it enters no
	// check.
	WarnBalance = "balance_unreadable"
)
