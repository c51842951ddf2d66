package camt

import (
	"testing"

	"github.com/clearing-dev/clearing/formats/internal/statementtest"
)

// TestGolden runs the data-driven cases of testdata/cases: the input is
// a camt document, and the want section holds every record, error,
// warning and statement summary, then the verdict.
func TestGolden(t *testing.T) {
	statementtest.Golden(t, func(t *testing.T, in string) string {
		return render(readAll(t, in, Options{}))
	})
}
