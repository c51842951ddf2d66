package csv

import "errors"

// Errors in a mapping file or in the fit between a mapping and a file's
// header. They are final: the file is not read.
var (
	// ErrMapping means a mapping file is malformed: a TOML syntax error, an
	// unknown key, a missing required key or keys that contradict each other.
	ErrMapping = errors.New("csv: invalid mapping")
	// ErrUnknownPreset means a "preset:" name that no shipped preset has.
	ErrUnknownPreset = errors.New("csv: unknown preset")
	// ErrMissingColumn means the mapping names a column that the header
	// lacks, or a position past the end of the row.
	ErrMissingColumn = errors.New("csv: mapping names a column the header lacks")
	// ErrDuplicateColumn means the header names one column twice while the
	// mapping addresses columns by name.
	ErrDuplicateColumn = errors.New("csv: header names a column more than once")
	// ErrNoHeader means the file ended before its header row.
	ErrNoHeader = errors.New("csv: file has no header row")
	// ErrDelimiter means the delimiter could not be detected from the header
	// line, so the mapping must name it.
	ErrDelimiter = errors.New("csv: cannot detect the delimiter")
	// ErrEncoding means the file is not UTF-8 (it starts with a UTF-16 byte
	// order mark).
	ErrEncoding = errors.New("csv: file is not UTF-8")
	// ErrOptions means the reader options are unusable, such as an empty
	// file id.
	ErrOptions = errors.New("csv: invalid reader options")
)

// Errors in one row. The reader wraps each in a *formats.ParseError that names
// the line, byte offset and column, and carries on with the next row.
var (
	// ErrQuote means a row breaks RFC 4180 quoting: a quote inside an
	// unquoted field, text after a closing quote, or a quoted field that is
	// never closed.
	ErrQuote = errors.New("csv: malformed quoting")
	// ErrFieldCount means a row has fewer fields than the header, or extra
	// fields that are not empty.
	ErrFieldCount = errors.New("csv: wrong number of fields")
	// ErrAmount means an amount that cannot be read exactly: empty, with
	// more decimal places than the currency has, with a separator the
	// mapping does not declare, or with a sign where none is allowed.
	ErrAmount = errors.New("csv: bad amount")
	// ErrDebitCredit means a row that fills both its debit and credit
	// columns, or neither.
	ErrDebitCredit = errors.New("csv: a row needs exactly one of debit and credit")
	// ErrDirection means a direction value that is in neither debit_values
	// nor credit_values.
	ErrDirection = errors.New("csv: unknown direction value")
	// ErrCurrency means an empty or unknown currency code.
	ErrCurrency = errors.New("csv: bad currency")
	// ErrDate means a value date that does not match date_layout.
	ErrDate = errors.New("csv: bad value date")
	// ErrEmptyValue means an empty key, reference or account value.
	ErrEmptyValue = errors.New("csv: required value is empty")
	// ErrValue means a key, reference or account value with control
	// characters or invalid UTF-8, which no key may carry.
	ErrValue = errors.New("csv: value has control characters or invalid UTF-8")
	// ErrLineType means a line type value that no *_values list names
	// while payment_values is set.
	ErrLineType = errors.New("csv: unknown line type value")
)
