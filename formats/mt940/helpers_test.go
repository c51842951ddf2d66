package mt940

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/pii"
)

// testHasher is the fixed key of every test, so that account ids in golden
// files are stable.
var testHasher = pii.New("mt940-test-key")

type readResult struct {
	records    []formats.Record
	errs       []*formats.ParseError
	final      error
	warnings   []Warning
	statements []Statement
}

func readAll(t testing.TB, in string, opts Options) readResult {
	t.Helper()
	var res readResult
	if opts.Hasher.IsZero() {
		opts.Hasher = testHasher
	}
	prev := opts.OnStatement
	opts.OnStatement = func(s Statement) {
		res.statements = append(res.statements, s)
		if prev != nil {
			prev(s)
		}
	}
	r := NewReader(strings.NewReader(in), opts)
	for n := 0; n < 1_000_000; n++ {
		rec, err := r.Next()
		var pe *formats.ParseError
		switch {
		case err == nil:
			res.records = append(res.records, rec)
		case errors.As(err, &pe):
			res.errs = append(res.errs, pe)
		default:
			res.final = err
			res.warnings = r.Warnings()
			return res
		}
	}
	t.Fatal("no verdict after a million calls")
	return res
}

// render describes every record, error, warning and statement of a read.
func render(res readResult) string {
	var b strings.Builder
	for _, r := range res.records {
		b.WriteString(describe(r) + "\n")
	}
	for _, e := range res.errs {
		fmt.Fprintf(&b, "error: %v\n", e)
	}
	for _, w := range res.warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	for _, s := range res.statements {
		fmt.Fprintf(&b, "statement MT%s ref=%q number=%q line %d %s entries=%d credits=%d debits=%d opening=%d closing=%d balances=%v balanced=%v\n",
			s.Type, s.Reference, s.Number, s.Line, s.Currency, s.Entries, s.Credits, s.Debits, s.Opening, s.Closing, s.HasBalances, s.Balanced)
	}
	if res.final == io.EOF {
		b.WriteString("EOF\n")
	} else {
		fmt.Fprintf(&b, "final: %v\n", res.final)
	}
	return b.String()
}

func describe(r formats.Record) string {
	acct := "-"
	if r.Account.ID != "" {
		acct = r.Account.ID[len("cust:"):len("cust:")+8] + "/" + r.Account.Last4
	}
	return fmt.Sprintf("%d@%d %s %s ref=%s alt=%s %d %s %s acct=%s %s %s %q", r.Line, r.Offset, r.Kind, r.Key, r.Reference, r.AltReference,
		r.Amount, r.Currency, r.Direction, acct, r.ValueDate.Format("2006-01-02"), r.LineType, r.Detail)
}
