package main

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/clearing-dev/clearing/formats"
)

// The statement is a CSV file: it streams in both directions (written here
// one line at a time, read by the CSV reader one row at a time), and a
// mapping file says what each column is. BAI2 would do too, but its
// generator takes the whole sequence of lines up front, and a million lines
// of one account and day is not a shape any bank sends.
const statementMapping = `# The bench's statement of the ACH source: one line per entry, keyed by
# its own id, matched on the ACH trace number.
source = "ach-statement"
key = ["id"]
reference = "trace"
amount = "amount"
amount_unit = "minor"
currency_fixed = "USD"
value_date = "value_date"
date_layout = "2006-01-02"
type_column = "type"
payment_values = ["payment"]
fee_values = ["fee"]
`

// planted counts the breaks written into the statement, by the class that
// reconciliation should give them.
type planted struct {
	lines   int64 // statement lines written
	matched int64
	missing int64 // postings left out: missing_in_statement
	changed int64 // amounts changed: amount_mismatch
	extra   int64 // lines for no posting: missing_in_ledger
	fees    int64 // fee lines: unbooked_fee
	from    time.Time
	to      time.Time
}

// statementWriter writes the bank's view of the ACH postings with 1% of
// breaks planted: for every posting, in file order, a seeded draw out of
// 1,000 decides: 3 leave the line out, 3 change its amount, 2 add a line
// for money the ledger never saw, 2 add a fee line; the other 990 copy the
// posting. Notices (prenotes) are not on a statement.
type statementWriter struct {
	f   *os.File
	w   *bufio.Writer
	rng *rand.Rand
	p   planted
}

func newStatementWriter(path string) (*statementWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	s := &statementWriter{f: f, w: bufio.NewWriterSize(f, 1<<20), rng: rand.New(rand.NewPCG(2026, 11))}
	_, err = s.w.WriteString("id,value_date,type,trace,amount\n")
	return s, err
}

// add writes the statement's view of one ACH record.
func (s *statementWriter) add(rec *formats.Record) error {
	if rec.Kind != formats.Clearing {
		return nil
	}
	if s.p.from.IsZero() || rec.ValueDate.Before(s.p.from) {
		s.p.from = rec.ValueDate
	}
	if rec.ValueDate.After(s.p.to) {
		s.p.to = rec.ValueDate
	}
	amount := rec.Amount
	if rec.Direction == formats.Debit {
		amount = -amount
	}
	date := rec.ValueDate.Format(time.DateOnly)
	switch d := s.rng.IntN(1000); {
	case d < 3:
		s.p.missing++
		return nil
	case d < 6:
		s.p.changed++
		amount = changedAmount(amount, 1+s.rng.Int64N(999))
	case d < 8:
		s.p.extra++
		s.p.matched++
		s.line(fmt.Sprintf("X%07d", s.p.extra), date, "payment", fmt.Sprintf("99999999%07d", s.p.extra), 1+s.rng.Int64N(500_000))
	case d < 10:
		s.p.fees++
		s.p.matched++
		s.line(fmt.Sprintf("F%07d", s.p.fees), date, "fee", fmt.Sprintf("FEE%07d", s.p.fees), -(100 + s.rng.Int64N(900)))
	default:
		s.p.matched++
	}
	s.line(rec.Reference, date, "payment", rec.Reference, amount)
	return nil
}

// changedAmount is the statement's amount for a posting of amount whose
// line the bench changes by delta. It is never zero: a line of no amount is
// a notice, not a statement line, and the planted mismatch would go
// missing (one did, at 9,980,000 entries).
func changedAmount(amount, delta int64) int64 {
	if amount+delta == 0 {
		return amount + delta + 1
	}
	return amount + delta
}

func (s *statementWriter) line(id, date, typ, trace string, amount int64) {
	s.p.lines++
	fmt.Fprintf(s.w, "%s,%s,%s,%s,%d\n", id, date, typ, trace, amount)
}

// close flushes the file and returns what it planted.
func (s *statementWriter) close() (planted, error) {
	err := s.w.Flush()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	return s.p, err
}
