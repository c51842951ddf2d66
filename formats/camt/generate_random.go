package camt

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/clearing-dev/clearing/formats"
)

// RandomOptions shape a synthetic statement set. The same options always
// give the same statements.
type RandomOptions struct {
	Seed       uint64
	Statements int // one per day; 1 when zero
	Entries    int // per statement; 10 when zero
	Currency   string
	Start      time.Time // the first statement's date; 2026-11-02 when zero
	// BatchPercent and ChargesPercent are the shares of entries written as
	// batches of two to four details, and of debit entries with charges.
	BatchPercent   int
	ChargesPercent int
}

// RandomStatements returns deterministic statements of one account whose
// balances add up, for Generate.
func RandomStatements(o RandomOptions) []StatementSpec {
	if o.Statements <= 0 {
		o.Statements = 1
	}
	if o.Entries <= 0 {
		o.Entries = 10
	}
	if o.Currency == "" {
		o.Currency = "EUR"
	}
	if o.Start.IsZero() {
		o.Start = formats.Date(2026, time.November, 2)
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x636d7434))
	balance := int64(rng.IntN(10_000_000))
	out := make([]StatementSpec, 0, o.Statements)
	for s := range o.Statements {
		day := o.Start.AddDate(0, 0, s)
		st := StatementSpec{ID: fmt.Sprintf("STMT-%s", day.Format("20060102")), IBAN: "DE89370400440532013000",
			Currency: o.Currency, Opening: balance, Date: day}
		for i := range o.Entries {
			e := Entry{Ref: fmt.Sprintf("%s-%05d", day.Format("060102"), i+1), Amount: 1 + int64(rng.IntN(500_000)),
				Direction: formats.Credit, EndToEndID: fmt.Sprintf("E2E-%d-%d", s+1, i+1)}
			if rng.IntN(2) == 0 {
				e.Direction, e.Family, e.Domain, e.SubFamily = formats.Debit, "ICDT", "PMNT", "ESCT"
			}
			switch {
			case rng.IntN(100) < o.BatchPercent:
				n := 2 + rng.IntN(3)
				var sum int64
				for k := range n {
					v := 1 + int64(rng.IntN(100_000))
					sum += v
					e.Details = append(e.Details, Detail{Amount: v, Direction: e.Direction, EndToEndID: fmt.Sprintf("%s/%d", e.EndToEndID, k+1)})
				}
				e.Amount = sum
			case e.Direction == formats.Debit && rng.IntN(100) < o.ChargesPercent:
				e.Charges = 1 + int64(rng.IntN(500))
				e.Amount += e.Charges
			}
			if e.Direction == formats.Credit {
				balance += e.Amount
			} else {
				balance -= e.Amount
			}
			st.Entries = append(st.Entries, e)
		}
		out = append(out, st)
	}
	return out
}
