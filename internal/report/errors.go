package report

import "errors"

// Sentinel errors that callers branch on. A format that is not offered
// wraps output.ErrFormat instead, so that every command rejects an unknown
// -o value the same way.
var (
	// ErrInvalid means the document breaks its own rules: a class this
	// package does not know, a Break flag that disagrees with its class, or
	// one currency bridged twice. It is a fault in whatever built the
	// report, and nothing is rendered.
	ErrInvalid = errors.New("report: invalid report")
	// ErrUnbalanced means a bridge's arithmetic is wrong: ledger total
	// minus statement total is not the sum of the class differences plus
	// the unexplained remainder. A bridge that does not add up cannot be
	// shown as if it did, so nothing is rendered.
	ErrUnbalanced = errors.New("report: bridge does not add up")
)
