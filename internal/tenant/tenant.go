// Package tenant defines what a tenant id is. Every table keys its rows by
// tenant id and every query filters on it with a plain equality, so two
// spellings of one tenant ("Default", "default ", "") would be two ledgers
// that never see each other's money. One rule, checked once before any
// command runs, keeps them one.
package tenant

import (
	"fmt"
	"regexp"
)

// Pattern is the documented form of a tenant id: one to 63 characters of
// lower-case ASCII letters, digits, '.', '_' and '-', beginning with a letter
// or a digit. Upper case is refused rather than folded, so that the id a
// user types is the id stored; 63 characters keep an id usable as a
// PostgreSQL identifier or a hostname label where a deployment needs one.
const Pattern = `[a-z0-9][a-z0-9._-]{0,62}`

// Default is the tenant of a command that names none.
const Default = "default"

var valid = regexp.MustCompile(`^` + Pattern + `$`)

// Validate returns nil when id is a tenant id, and an error wrapping
// ErrInvalid that quotes (the start of) id and states the rule otherwise.
func Validate(id string) error {
	if valid.MatchString(id) {
		return nil
	}
	return fmt.Errorf("%w %.70q: use 1 to 63 characters of a-z, 0-9, '.', '_' and '-', beginning with a letter or digit (%s)",
		ErrInvalid, id, Pattern)
}
