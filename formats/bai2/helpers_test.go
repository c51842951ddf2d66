package bai2

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/pii"
)

var testHasher = pii.New("bai2-test-key")

// result is everything one pass over a file produced.
type result struct {
	records  []formats.Record
	errs     []*formats.ParseError
	accounts []AccountSummary
	final    error // io.EOF or the final error
}

// fataler is the part of testing.TB and rapid.T that readAll needs.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// readAll reads a whole file, failing the test if the reader does not end
// within a bound that a correct reader always meets.
func readAll(t fataler, in string, opts Options) result {
	t.Helper()
	if opts.Hasher.IsZero() {
		opts.Hasher = testHasher
	}
	var res result
	user := opts.OnAccount
	opts.OnAccount = func(s AccountSummary) {
		res.accounts = append(res.accounts, s)
		if user != nil {
			user(s)
		}
	}
	r := NewReader(strings.NewReader(in), opts)
	for i := 0; ; i++ {
		if i > 4*len(in)+10 {
			t.Fatalf("reader did not end after %d calls", i)
		}
		rec, err := r.Next()
		var pe *formats.ParseError
		switch {
		case err == nil:
			res.records = append(res.records, rec)
		case errors.As(err, &pe):
			res.errs = append(res.errs, pe)
		default:
			res.final = err
			return res
		}
	}
}

// render prints a pass in the line format of the testdata golden files.
func render(res result) string {
	var b strings.Builder
	for _, r := range res.records {
		fmt.Fprintf(&b, "record line %d: %s %s %d %s %s %s value %s ref %q alt %q account %s: %s\n",
			r.Line, r.Key, r.Kind, r.Amount, r.Currency, r.Direction, r.LineType,
			r.ValueDate.Format("2006-01-02"), r.Reference, r.AltReference, r.Account.Last4, r.Detail)
	}
	for _, a := range res.accounts {
		fmt.Fprintf(&b, "account line %d: %s %s as of %s modifier %d status %d total %d records %d:",
			a.Line, a.Account.Last4, a.Currency, a.AsOfDate.Format("2006-01-02"), a.AsOfModifier, a.GroupStatus,
			a.ControlTotal, a.Records)
		for _, s := range a.Summaries {
			fmt.Fprintf(&b, " %03d=%d", s.TypeCode, s.Amount)
			if !s.HasAmount {
				b.WriteString("(none)")
			}
			if s.ItemCount > 0 {
				fmt.Fprintf(&b, "/%d", s.ItemCount)
			}
			if s.Funds.Type != "" {
				fmt.Fprintf(&b, "/%s", s.Funds.Type)
			}
			for _, d := range s.Funds.Distributions {
				fmt.Fprintf(&b, "[%dd:%d]", d.Days, d.Amount)
			}
		}
		b.WriteString("\n")
	}
	for _, e := range res.errs {
		fmt.Fprintf(&b, "error: %v\n", e)
	}
	if res.final == io.EOF {
		b.WriteString("end: EOF\n")
	} else {
		fmt.Fprintf(&b, "end: %v\n", res.final)
	}
	return b.String()
}
