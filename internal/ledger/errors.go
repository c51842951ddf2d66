package ledger

import "errors"

// Sentinel errors that callers branch on.
var (
	// ErrNotFound means no posting, notice or event has the key asked for.
	ErrNotFound = errors.New("ledger: not found")
	// ErrUnbalanced means a posting's legs do not net to zero per currency.
	ErrUnbalanced = errors.New("ledger: posting does not balance")
)
