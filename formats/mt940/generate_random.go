package mt940

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/clearing-dev/clearing/formats"
)

// RandomOptions shape a synthetic set of statements. The same options
// always give the same statements.
type RandomOptions struct {
	Seed       uint64
	Statements int // one per day; 1 when zero
	Lines      int // per statement; 10 when zero
	Currency   string
	Start      time.Time // 2026-11-02 when zero
	// BlankReferencePercent is the share of lines without a bank reference.
	BlankReferencePercent int
}

// RandomStatements returns deterministic statements of one account whose
// balances add up, for Generate.
func RandomStatements(o RandomOptions) []StatementSpec {
	if o.Statements <= 0 {
		o.Statements = 1
	}
	if o.Lines <= 0 {
		o.Lines = 10
	}
	if o.Currency == "" {
		o.Currency = "EUR"
	}
	if o.Start.IsZero() {
		o.Start = formats.Date(2026, time.November, 2)
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x6d743934))
	balance := int64(rng.IntN(10_000_000))
	out := make([]StatementSpec, 0, o.Statements)
	for s := range o.Statements {
		day := o.Start.AddDate(0, 0, s)
		st := StatementSpec{Reference: fmt.Sprintf("GEN%s", day.Format("060102")), Account: "DE89370400440532013000",
			Number: fmt.Sprintf("%05d/001", s+1), Currency: o.Currency, Opening: balance, Date: day}
		for i := range o.Lines {
			l := Line{Direction: formats.Credit, Amount: 1 + int64(rng.IntN(500_000)),
				EndToEnd: fmt.Sprintf("E2E-%d-%d", s+1, i+1), CustRef: fmt.Sprintf("C%d", i+1)}
			if rng.IntN(2) == 0 {
				l.Direction = formats.Debit
			}
			if rng.IntN(100) >= o.BlankReferencePercent {
				l.BankRef = fmt.Sprintf("B%s%05d", day.Format("0102"), i+1)
			}
			if rng.IntN(20) == 0 {
				l.Reversal, l.Type = true, "NRTI"
			}
			if l.Direction == formats.Credit {
				balance += l.Amount
			} else {
				balance -= l.Amount
			}
			st.Lines = append(st.Lines, l)
		}
		out = append(out, st)
	}
	return out
}
