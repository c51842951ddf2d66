package bai2

import (
	"fmt"
	"iter"
	"math/rand/v2"
	"strings"
	"time"
)

// RandomOptions describe a synthetic statement for RandomLines. Zero fields
// take the defaults named.
type RandomOptions struct {
	Seed     uint64
	Lines    int       // number of lines
	Accounts int       // accounts reported each day; default 3
	Days     int       // consecutive as-of dates; default 1
	Start    time.Time // first as-of date; default 2026-01-05
	Currency string    // default USD
	// BlankReferencePercent is the share of lines, 0-100, written without a
	// bank reference, which the reader then keys by position.
	BlankReferencePercent int
}

// randomCodes is the mix of type codes RandomLines draws from: mostly
// ordinary payments, with returns, fees and settlement totals among them.
var randomCodes = []int{108, 142, 165, 195, 206, 409, 451, 455, 475, 495, 506, 108, 475, 257, 555, 661, 166, 466}

// RandomLines returns a deterministic sequence of statement lines: the same
// options always give the same lines, in the order Generate needs (by date,
// then account). It holds no more than one line at a time.
func RandomLines(o RandomOptions) iter.Seq[Line] {
	if o.Accounts <= 0 {
		o.Accounts = 3
	}
	if o.Days <= 0 {
		o.Days = 1
	}
	if o.Start.IsZero() {
		o.Start = time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	}
	if o.Currency == "" {
		o.Currency = "USD"
	}
	return func(yield func(Line) bool) {
		rng := rand.New(rand.NewPCG(o.Seed, 0xba12))
		accounts := make([]string, o.Accounts)
		for i := range accounts {
			accounts[i] = fmt.Sprintf("%010d", rng.Uint64N(1e10))
		}
		sections := o.Accounts * o.Days
		for i := 0; i < o.Lines; i++ {
			s := int(int64(i) * int64(sections) / int64(o.Lines))
			day := o.Start.AddDate(0, 0, s/o.Accounts)
			l := Line{
				Account:           accounts[s%o.Accounts],
				Currency:          o.Currency,
				Date:              day,
				TypeCode:          randomCodes[rng.IntN(len(randomCodes))],
				Amount:            1 + rng.Int64N(100_000_000),
				CustomerReference: fmt.Sprintf("C%09d", rng.Uint64N(1e9)),
				Text:              "GENERATED LINE " + fmt.Sprint(i+1),
			}
			if rng.IntN(100) >= o.BlankReferencePercent {
				l.BankReference = fmt.Sprintf("B%s%08d", day.Format("060102"), i+1)
			}
			if i%5 == 4 {
				l.ValueDate = day.AddDate(0, 0, -1)
			}
			if i%10 == 9 {
				l.Text += " " + strings.Repeat("CONTINUED TEXT ", 6)
			}
			if !yield(l) {
				return
			}
		}
	}
}
