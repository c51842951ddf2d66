// Package demo writes a small, coherent set of sample files that walks
// through what clearing does: a day's ACH file, the same file again, a
// corrected re-upload, a file that restates one amount, a return file, the
// bank's BAI2 statement with a few planted differences, and a day of card
// clearing as Mastercard IPM, with the same messages again in another
// blocking and code page. The same call always writes the same bytes.
package demo

import (
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/clearing-dev/clearing/formats/ach"
	"github.com/clearing-dev/clearing/formats/bai2"
	"github.com/clearing-dev/clearing/formats/ipm"
)

// Scenario names the files written and the keys and dates worth showing.
type Scenario struct {
	Dir         string `json:"dir"`
	Day1        string `json:"day1"`         // a day's ACH file
	Reupload    string `json:"reupload"`     // the same entries plus new ones, under a new file header
	Restated    string `json:"restated"`     // the day's file with one amount changed: a conflict
	Returns     string `json:"returns"`      // returns of two of the day's entries
	Statement   string `json:"statement"`    // the bank's BAI2 statement of the settlement account
	Cards       string `json:"cards"`        // a day of Mastercard IPM clearing: 1014-blocked EBCDIC, with chargebacks
	CardsResent string `json:"cards_resent"` // the same messages, unblocked and in ASCII
	ReturnedKey string `json:"returned_key"` // the key of an entry that was returned
	ChangedKey  string `json:"changed_key"`  // the key whose amount the restated file changes
	// The period the statement covers, YYYY-MM-DD.
	From string `json:"from"`
	To   string `json:"to"`
}

const (
	seed     = 20261129
	day1Size = 24
	newSize  = 6
)

// Write writes the scenario's files into dir, which it creates.
func Write(dir string) (Scenario, error) {
	s := Scenario{Dir: dir}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return s, err
	}
	entries := slices.Collect(ach.GenerateEntries(seed, day1Size+newSize))
	first := entries[0].EffectiveDate
	// The re-upload's new entries settle the next day, after the statement
	// ends, so reconciliation shows them in transit.
	for i := day1Size; i < len(entries); i++ {
		entries[i].EffectiveDate = first.AddDate(0, 0, 1)
	}
	day1 := entries[:day1Size]
	live := liveEntries(day1)
	returned, second := live[2], live[7]
	changed := live[5]
	s.ReturnedKey, s.ChangedKey = returned.Key(), changed.Key()
	s.From, s.To = first.Format(time.DateOnly), first.AddDate(0, 0, 1).Format(time.DateOnly)

	created := time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC)
	files := []struct {
		name  *string
		file  string
		write func(*os.File) error
	}{
		{&s.Day1, "day1.ach", func(f *os.File) error {
			return ach.WriteEntries(f, ach.DefaultHeader(created), slices.Values(day1))
		}},
		{&s.Reupload, "day1-corrected.ach", func(f *os.File) error {
			h := ach.DefaultHeader(created.Add(3 * time.Hour))
			h.IDModifier, h.FirstBatch = "B", 7
			return ach.WriteEntries(f, h, slices.Values(entries))
		}},
		{&s.Restated, "day1-restated.ach", func(f *os.File) error {
			restated := slices.Clone(day1)
			for i := range restated {
				if restated[i].Key() == changed.Key() {
					restated[i].Amount += 100
				}
			}
			h := ach.DefaultHeader(created.Add(5 * time.Hour))
			h.IDModifier = "C"
			return ach.WriteEntries(f, h, slices.Values(restated))
		}},
		{&s.Returns, "returns.ach", func(f *os.File) error {
			h := ach.DefaultHeader(created.Add(24 * time.Hour))
			return ach.WriteReturns(f, h, slices.Values([]ach.Return{
				ach.ReturnOf(returned, "R01", 1), ach.ReturnOf(second, "R03", 2),
			}))
		}},
		{&s.Cards, "cards.ipm", func(f *os.File) error {
			_, err := ipm.Generate(f, cards(true, ipm.EncodingCP500))
			return err
		}},
		{&s.CardsResent, "cards-resent.ipm", func(f *os.File) error {
			_, err := ipm.Generate(f, cards(false, ipm.EncodingLatin1))
			return err
		}},
		{&s.Statement, "statement.bai2", func(f *os.File) error {
			return bai2.Generate(f, statementLines(live, returned, second, first), bai2.GenerateOptions{
				Sender: "121042882", Created: created.Add(30 * time.Hour),
			})
		}},
	}
	for _, fl := range files {
		*fl.name = filepath.Join(dir, fl.file)
		f, err := os.Create(*fl.name)
		if err != nil {
			return s, err
		}
		err = fl.write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return s, fmt.Errorf("demo: %s: %w", fl.file, err)
		}
	}
	return s, nil
}

// cards describes the demo's IPM day: the same messages in any blocking and
// code page.
func cards(blocked bool, encoding string) ipm.GenerateOptions {
	return ipm.GenerateOptions{Seed: seed, Presentments: 30, Lifecycle: true, Blocked: blocked, Encoding: encoding}
}

// liveEntries drops prenotes, which move no money.
func liveEntries(es []ach.Entry) []ach.Entry {
	var out []ach.Entry
	for _, e := range es {
		if e.Amount > 0 {
			out = append(out, e)
		}
	}
	return out
}

// settlementAccount is the bank account the statement reports: ours.
const settlementAccount = "000123456789"

// statementLines is the bank's view of the day: every live entry, except
// that it leaves out one, shows another 0.50 short, adds a payment the
// ledger never saw and a bank fee, and shows neither returned entry (they
// were returned the same day and netted). Credits to customers leave our
// account (type 455, a debit of the account); debits to customers arrive in
// it (165, a credit).
func statementLines(live []ach.Entry, returned, second ach.Entry, day time.Time) iter.Seq[bai2.Line] {
	return func(yield func(bai2.Line) bool) {
		for i, e := range live {
			if e.Key() == returned.Key() || e.Key() == second.Key() || i == 10 {
				continue
			}
			amount := e.Amount
			if i == 11 {
				amount -= 50
			}
			if !yield(line(e.Trace, amount, e.TransactionCode%10 == 2, day)) {
				return
			}
		}
		extra := line("121042889999001", 12_500, false, day)
		fee := line("FEE20261129", 2_500, true, day)
		fee.TypeCode = 698 // miscellaneous fees
		if !yield(extra) {
			return
		}
		yield(fee)
	}
}

// line is one statement line for a trace number; paid says whether the
// money left our account.
func line(trace string, amount int64, paid bool, day time.Time) bai2.Line {
	code := 165 // preauthorized ACH credit: money in
	if paid {
		code = 455 // preauthorized ACH debit: money out
	}
	return bai2.Line{Account: settlementAccount, Currency: "USD", Date: day, TypeCode: code, Amount: amount,
		BankReference: trace, CustomerReference: trace}
}
