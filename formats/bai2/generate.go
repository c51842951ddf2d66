package bai2

import (
	"bufio"
	"fmt"
	"io"
	"iter"
	"strconv"
	"time"
)

// Line is one statement line for Generate: a 16 transaction detail and the
// account and as-of date it is reported under.
type Line struct {
	Account  string    // customer account number, in clear
	Currency string    // ISO 4217 code; empty means USD
	Date     time.Time // as-of date of the group that reports the line
	TypeCode int       // a detail type code the reader accepts
	Amount   int64     // minor units of Currency; not negative
	// ValueDate, when set, is written with funds type V.
	ValueDate         time.Time
	BankReference     string
	CustomerReference string
	Text              string
}

// GenerateOptions configure Generate. Zero fields take the defaults named.
type GenerateOptions struct {
	Sender     string    // 01 sender identification; default "CLEARINGBANK"
	Receiver   string    // 01 receiver identification; default "CUSTOMER"
	Originator string    // 02 originator, the reporting bank; default Sender
	FileID     string    // 01 file identification number; default "1"
	Created    time.Time // file creation date and time; default the first line's date
	// RecordLength is the longest physical record. A longer record is
	// continued with 88 records, as banks do. Default 80, minimum 40.
	RecordLength int
}

func (o GenerateOptions) withDefaults() GenerateOptions {
	if o.Sender == "" {
		o.Sender = "CLEARINGBANK"
	}
	if o.Receiver == "" {
		o.Receiver = "CUSTOMER"
	}
	if o.Originator == "" {
		o.Originator = o.Sender
	}
	if o.FileID == "" {
		o.FileID = "1"
	}
	if o.RecordLength == 0 {
		o.RecordLength = 80
	}
	if o.RecordLength < 40 {
		o.RecordLength = 40
	}
	return o
}

// Generate writes a valid BAI2 file reporting lines, with correct control
// totals and record counts in every trailer. It streams: lines are written
// as they come, and memory does not grow with their number.
//
// Consecutive lines with the same Date share a group (02); consecutive
// lines of a group with the same Account and Currency share an account
// section (03). Lines that should be reported together must therefore come
// together, sorted by date and then account. The output depends only on
// lines and opts, so a fixed input gives a byte-identical file.
func Generate(w io.Writer, lines iter.Seq[Line], opts GenerateOptions) error {
	opts = opts.withDefaults()
	for _, id := range []string{opts.Sender, opts.Receiver, opts.Originator, opts.FileID} {
		if err := checkGenField(id, "identification", true); err != nil {
			return err
		}
	}
	g := &generator{w: bufio.NewWriter(w), opts: opts}
	for l := range lines {
		if err := g.line(l); err != nil {
			return err
		}
	}
	return g.close()
}

// generator holds the open group and account and the running trailers.
type generator struct {
	w       *bufio.Writer
	opts    GenerateOptions
	started bool
	inGroup bool
	inAcct  bool
	date    time.Time
	groupCy string
	account string
	acctCy  string
	file    genTotals
	group   genTotals
	acct    genTotals
	groups  int64
	accts   int64
	buf     []byte
	fields  []string
}

// genTotals is a control total and a physical record count.
type genTotals struct {
	total   int64
	records int64
}

func (g *generator) line(l Line) error {
	if l.Currency == "" {
		l.Currency = "USD"
	}
	if err := checkLine(l); err != nil {
		return err
	}
	if !g.started {
		g.header(l.Date)
	}
	if g.inGroup && !l.Date.Equal(g.date) {
		g.closeGroup()
	}
	if !g.inGroup {
		g.openGroup(l)
	}
	if g.inAcct && (l.Account != g.account || l.Currency != g.acctCy) {
		g.closeAccount()
	}
	if !g.inAcct {
		g.openAccount(l)
	}
	f := append(g.fields[:0], strconv.Itoa(l.TypeCode), strconv.FormatInt(l.Amount, 10))
	if l.ValueDate.IsZero() {
		f = append(f, "")
	} else {
		f = append(f, "V", l.ValueDate.Format("060102"), "")
	}
	f = append(f, l.BankReference, l.CustomerReference, l.Text)
	g.fields = f
	if !addAmount(&g.acct.total, l.Amount) {
		return fmt.Errorf("%w: account amounts overflow", ErrInvalidLine)
	}
	g.record("16", f, true, &g.acct, &g.group, &g.file)
	return nil
}

func (g *generator) header(first time.Time) {
	created := g.opts.Created
	if created.IsZero() {
		created = first
	}
	if created.IsZero() {
		created = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	g.started = true
	g.record("01", []string{g.opts.Sender, g.opts.Receiver, created.Format("060102"), created.Format("1504"),
		g.opts.FileID, strconv.Itoa(g.opts.RecordLength), "", "2"}, false, &g.file)
}

func (g *generator) openGroup(l Line) {
	g.inGroup, g.date, g.groupCy = true, l.Date, l.Currency
	g.group = genTotals{}
	g.groups++
	g.record("02", []string{g.opts.Receiver, g.opts.Originator, "1", l.Date.Format("060102"), "", l.Currency, "2"},
		false, &g.group, &g.file)
}

func (g *generator) openAccount(l Line) {
	g.inAcct, g.account, g.acctCy = true, l.Account, l.Currency
	g.acct = genTotals{}
	g.accts++
	cy := ""
	if l.Currency != g.groupCy {
		cy = l.Currency
	}
	g.record("03", []string{l.Account, cy}, false, &g.acct, &g.group, &g.file)
}

func (g *generator) closeAccount() {
	g.acct.records++ // the 49 itself
	g.record("49", []string{strconv.FormatInt(g.acct.total, 10), strconv.FormatInt(g.acct.records, 10)},
		false, &g.group, &g.file)
	g.group.total += g.acct.total
	g.inAcct = false
}

func (g *generator) closeGroup() {
	if g.inAcct {
		g.closeAccount()
	}
	g.group.records++ // the 98 itself
	g.record("98", []string{strconv.FormatInt(g.group.total, 10), strconv.FormatInt(g.accts, 10),
		strconv.FormatInt(g.group.records, 10)}, false, &g.file)
	g.file.total += g.group.total
	g.accts = 0
	g.inGroup = false
}

func (g *generator) close() error {
	if !g.started {
		g.header(time.Time{})
	}
	if g.inGroup {
		g.closeGroup()
	}
	g.file.records++ // the 99 itself
	g.record("99", []string{strconv.FormatInt(g.file.total, 10), strconv.FormatInt(g.groups, 10),
		strconv.FormatInt(g.file.records, 10)}, false)
	return g.w.Flush()
}
