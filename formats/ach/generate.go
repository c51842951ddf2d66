package ach

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"time"

	moov "github.com/moov-io/ach"

	"github.com/clearing-dev/clearing/formats"
)

// Entry is one forward entry for the generator: the fields that identify it,
// value it and place it in a batch. WriteEntries writes entries as they are,
// WriteIAT as IAT entries; Returns and Notices are built from them.
type Entry struct {
	SEC           string    // standard entry class code: "PPD", "CCD" or "WEB" (WriteIAT ignores it)
	CompanyID     string    // company identification (IAT: originator identification)
	CompanyName   string    // IAT: the originator's name, written in addenda 11
	EffectiveDate time.Time // the batch's effective entry date
	// ODFI is the originating bank's 8-digit routing prefix. The batch header
	// carries it and Trace must start with it.
	ODFI            string
	Trace           string // 15 digits
	TransactionCode int    // 22, 27, 32, 37 (live) or 23, 28, 33, 38 (prenote, amount 0)
	Amount          int64  // cents
	RDFI            string // the receiving bank's 9-digit routing number
	Account         string
	Name            string // receiver name; the generator only writes synthetic names
}

// Key returns the natural key the Reader gives the entry.
func (e Entry) Key() string { return Key(e.CompanyID, e.EffectiveDate, e.Trace) }

// check reports what keeps e from being written as a valid entry: the
// writers refuse what they cannot write validly rather than write a file
// the Reader rejects.
func (e Entry) check(iat bool) error {
	if !iat && e.SEC != moov.PPD && e.SEC != moov.CCD && e.SEC != moov.WEB {
		return fmt.Errorf("ach: generator: SEC code %q: only PPD, CCD and WEB are written", e.SEC)
	}
	tx, ok := lookupTx(e.TransactionCode)
	switch {
	case !ok || (tx.class != txForward && tx.class != txPrenote) || e.TransactionCode == 55:
		return fmt.Errorf("ach: generator: transaction code %d: only live and prenote codes are written", e.TransactionCode)
	case (tx.class == txPrenote) != (e.Amount == 0):
		return fmt.Errorf("ach: generator: amount %d with transaction code %d", e.Amount, e.TransactionCode)
	}
	return checkIDs(e.Trace, e.ODFI, e.RDFI, e.Amount)
}

// checkIDs checks the trace number, routing numbers and amount of an entry
// to be written.
func checkIDs(trace, odfi, rdfi string, amount int64) error {
	switch {
	case len(trace) != 15 || !isDigits(trace):
		return fmt.Errorf("ach: generator: trace number %q is not 15 digits", trace)
	case len(odfi) != 8 || !isDigits(odfi) || trace[:8] != odfi:
		return fmt.Errorf("ach: generator: ODFI %q is not 8 digits starting trace number %s", odfi, trace)
	case len(rdfi) != 9 || checkDigit(rdfi[:8]) != int(rdfi[8]-'0'):
		return fmt.Errorf("ach: generator: RDFI %q is not a routing number", rdfi)
	case amount < 0 || amount > moov.NachaEntryAmountLimit:
		return fmt.Errorf("ach: generator: amount %d out of range", amount)
	}
	return nil
}

// Header describes a generated file's header and how entries are batched.
type Header struct {
	Destination     string    // immediate destination: a 9-digit routing number
	Origin          string    // immediate origin: a routing number or 10-character identifier
	DestinationName string    // up to 23 characters
	OriginName      string    // up to 23 characters
	Created         time.Time // file creation date and time, to the minute
	IDModifier      string    // file ID modifier, "A" to "Z" or "0" to "9"; "" means "A"
	// BatchSize is the most entries in one batch; zero means DefaultBatchSize.
	// A batch also ends where the batch fields of consecutive entries differ
	// (SEC code, company, date, ODFI) and where a trace number does not
	// ascend, so that any sequence of entries makes a valid file.
	BatchSize int
	// FirstBatch is the number of the first batch; zero means 1. A corrected
	// re-upload typically numbers its batches differently.
	FirstBatch int
}

// DefaultBatchSize is the batch size of a Header that sets none.
const DefaultBatchSize = 1000

// DefaultHeader returns a Header for a file created at created.
func DefaultHeader(created time.Time) Header {
	return Header{
		Destination: "231380104", Origin: "121042882",
		DestinationName: "CLEARING BANK", OriginName: "ORIGINATING BANK",
		Created: created, IDModifier: "A",
	}
}

// WriteEntries writes a file of forward entries to w. It holds one batch's
// totals at a time, never the entries, so entries may be a sequence of any
// length.
func WriteEntries(w io.Writer, h Header, entries iter.Seq[Entry]) error {
	fw := newFileWriter(w, h, false)
	for e := range entries {
		if err := e.check(false); err != nil {
			fw.fail(err)
			break
		}
		fw.entry(batchKey{kind: kindStandard, sec: e.SEC, company: e.CompanyID, name: e.CompanyName,
			date: e.EffectiveDate, odfi: e.ODFI, description: "PAYMENT"},
			e.Trace, e.RDFI, e.Amount, e.TransactionCode, standardEntry(e, e.TransactionCode, e.RDFI))
	}
	return fw.close()
}

// standardEntry is the entry detail record for e, sent to rdfi.
func standardEntry(e Entry, code int, rdfi string) *moov.EntryDetail {
	ed := moov.NewEntryDetail()
	ed.SetSECCode(e.SEC)
	ed.TransactionCode = code
	ed.SetRDFI(rdfi)
	ed.DFIAccountNumber = e.Account
	ed.Amount = int(e.Amount)
	ed.IdentificationNumber = "ID" + e.Trace[8:]
	ed.IndividualName = e.Name
	ed.TraceNumber = e.Trace
	if e.SEC == moov.WEB {
		ed.DiscretionaryData = "S" // single-entry payment type code
	}
	return ed
}

// genCompany is one of the originators that GenerateEntries uses.
type genCompany struct {
	id, name, sec, odfi string
}

var genCompanies = []genCompany{
	{"1234567890", "ACME PAYROLL", moov.PPD, "12104288"},
	{"9876543210", "GLOBEX UTILITIES", moov.WEB, "23138010"},
	{"1122334455", "INITECH SUPPLY", moov.CCD, "12104288"},
	{"5544332211", "UMBRELLA INSURANCE", moov.PPD, "09100001"},
}

// genRun is how many consecutive generated entries share a company and a
// date: a run splits into batches of Header.BatchSize when that is smaller.
const genRun = 1000

// genDate is the first effective entry date that GenerateEntries uses.
var genDate = time.Date(2026, time.March, 2, 0, 0, 0, 0, time.UTC)

// GenerateOptions describe generated entries. Beyond Seed and Entries, the
// zero value of a field keeps what GenerateEntries does, so that two files
// generated with another Date, Company or TraceStart share no key.
type GenerateOptions struct {
	Seed    uint64
	Entries int
	// Date is the first effective entry date; zero means 2026-03-02.
	Date time.Time
	// Company, when set, is the company identification of every entry (10
	// digits or capital letters), in place of the four generated
	// originators: one originator's PPD entries from one ODFI.
	Company string
	// TraceStart is the sequence number (the trace number's last seven
	// digits) of the first entry; zero means 1. The next file of the same
	// originator and day starts where the last one ended.
	TraceStart int
}

// maxTraceSequence is the largest sequence number a trace number holds.
const maxTraceSequence = 9_999_999

// MaxEntries is the most entries the generator writes in one file: the
// file control counts its blocks of ten records in six digits, so a file
// of entries in batches of 1,000 ends below 10,000,000 entries.
const MaxEntries = 9_980_000

// Check reports what keeps o from describing valid entries.
func (o GenerateOptions) Check() error {
	switch {
	case o.Entries < 0:
		return fmt.Errorf("ach: generator: %d entries", o.Entries)
	case o.Entries > MaxEntries:
		return fmt.Errorf("ach: generator: %d entries: one file holds at most %d (its control counts blocks of ten records in six digits)",
			o.Entries, MaxEntries)
	case o.Company != "" && !validCompany(o.Company):
		return fmt.Errorf("ach: generator: company identification %q is not 10 digits or capital letters", o.Company)
	case o.TraceStart < 0 || o.TraceStart > maxTraceSequence:
		return fmt.Errorf("ach: generator: trace start %d is not a sequence number from 1 to %d", o.TraceStart, maxTraceSequence)
	}
	return nil
}

func validCompany(id string) bool {
	if len(id) != 10 {
		return false
	}
	for _, c := range []byte(id) {
		if (c < '0' || c > '9') && (c < 'A' || c > 'Z') {
			return false
		}
	}
	return true
}

// GenerateEntries returns n deterministic forward entries for seed: four
// companies (PPD, WEB, CCD and PPD again) in runs of 1,000 entries, five
// effective dates, credits and debits to checking and savings accounts, and
// about 3% prenotes. Trace numbers ascend, so the entries of a run make
// batches as they come, and no two entries share a key. The entries are
// made as the sequence is consumed; none is held.
func GenerateEntries(seed uint64, n int) iter.Seq[Entry] {
	return GenerateOptions{Seed: seed, Entries: n}.Generate()
}

// Generate returns the entries o describes, as GenerateEntries does; the
// first k entries are the same whatever o.Entries is. Options that Check
// refuses give no entries.
func (o GenerateOptions) Generate() iter.Seq[Entry] {
	return func(yield func(Entry) bool) {
		if o.Check() != nil {
			return
		}
		date := genDate
		if !o.Date.IsZero() {
			date = o.Date
		}
		start := max(o.TraceStart, 1) - 1
		rng := rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
		rdfis := make([]string, 16)
		for i := range rdfis {
			rdfis[i] = routing9(fmt.Sprintf("%08d", rng.IntN(100_000_000)))
		}
		for i := 0; i < o.Entries; i++ {
			run := i / genRun
			c := genCompanies[run%len(genCompanies)]
			if o.Company != "" {
				c = genCompany{o.Company, "CO " + o.Company, moov.PPD, genCompanies[0].odfi}
			}
			// Trace sequence numbers run from 1 to maxTraceSequence; past
			// it they start again and the dates move on a week, so that
			// keys stay unique.
			n := start + i
			days := (run/len(genCompanies))%5 + 7*(n/maxTraceSequence)
			e := Entry{
				SEC: c.sec, CompanyID: c.id, CompanyName: c.name,
				EffectiveDate: date.AddDate(0, 0, days), ODFI: c.odfi,
				Trace:   fmt.Sprintf("%s%07d", c.odfi, n%maxTraceSequence+1),
				RDFI:    rdfis[rng.IntN(len(rdfis))],
				Account: fmt.Sprintf("%0*d", 8+rng.IntN(5), rng.Int64N(1_000_000_000_000)),
				Name:    fmt.Sprintf("CUSTOMER %07d", rng.IntN(10_000_000)),
			}
			e.TransactionCode = 27 // a checking debit
			if rng.IntN(10) < 6 {
				e.TransactionCode = 22 // a checking credit
			}
			if rng.IntN(4) == 0 {
				e.TransactionCode += 10 // the savings account's code
			}
			if rng.IntN(100) < 3 {
				e.TransactionCode++ // the prenote code follows the live one: 22 -> 23, 27 -> 28
			} else {
				e.Amount = 1 + rng.Int64N(genAmountRange(n))
			}
			if !yield(e) {
				return
			}
		}
	}
}

// genAmountRange is how many amounts, in cents from 1 up, the n-th
// entry's amount is drawn from: up to $5,000, and up to $500 from the
// 4,000,000th entry on, so that a file of up to about 9,980,000 entries
// (the most a file control counts) keeps its credits and its debits
// within the twelve digits of their totals.
func genAmountRange(n int) int64 {
	if n >= 4_000_000 {
		return 50_000
	}
	return 500_000
}

// batchKey is what makes consecutive entries share a batch.
type batchKey struct {
	kind        batchKind
	sec         string
	company     string
	name        string
	date        time.Time
	odfi        string
	description string
}

// fileWriter writes a file record by record, keeping only the open batch's
// and the file's totals.
type fileWriter struct {
	w       *bufio.Writer
	h       Header
	adv     bool
	open    bool
	key     batchKey
	number  int
	n       int // entries in the open batch
	trace   string
	batch   totals
	file    totals
	batches int
	lines   int
	err     error
}

func newFileWriter(w io.Writer, h Header, adv bool) *fileWriter {
	if h.BatchSize <= 0 {
		h.BatchSize = DefaultBatchSize
	}
	if h.FirstBatch <= 0 {
		h.FirstBatch = 1
	}
	if h.IDModifier == "" {
		h.IDModifier = "A"
	}
	fw := &fileWriter{w: bufio.NewWriter(w), h: h, adv: adv, number: h.FirstBatch - 1}
	fh := moov.NewFileHeader()
	fh.ImmediateDestination, fh.ImmediateOrigin = h.Destination, h.Origin
	fh.ImmediateDestinationName, fh.ImmediateOriginName = h.DestinationName, h.OriginName
	fh.FileCreationDate, fh.FileCreationTime = h.Created.Format("060102"), h.Created.Format("1504")
	fh.FileIDModifier = h.IDModifier
	fw.line(fh.String())
	return fw
}

// line writes one record.
func (fw *fileWriter) line(s string) {
	if fw.err != nil {
		return
	}
	if len(s) != recordLength {
		fw.err = fmt.Errorf("ach: generated a record of %d characters: %.20q", len(s), s)
		return
	}
	fw.lines++
	_, fw.err = fw.w.WriteString(s + "\n")
}

// entry writes an entry record and its addenda, opening a new batch first
// when it cannot join the open one.
func (fw *fileWriter) entry(k batchKey, trace, rdfi string, amount int64, code int, records ...fmt.Stringer) {
	if fw.err != nil {
		return
	}
	if !fw.open || k != fw.key || fw.n >= fw.h.BatchSize || (k.kind != kindADV && trace <= fw.trace) {
		fw.closeBatch()
		fw.openBatch(k)
	}
	tx, ok := lookupTx(code)
	if !ok {
		fw.fail(fmt.Errorf("ach: generator: transaction code %d", code))
		return
	}
	fw.n++
	fw.trace = trace
	fw.batch.count += int64(len(records))
	fw.batch.hash += mustNumber(rdfi[:8])
	if tx.dir == formats.Credit {
		fw.batch.credit += amount
	} else {
		fw.batch.debit += amount
	}
	for _, rec := range records {
		fw.line(rec.String())
	}
}

func (fw *fileWriter) fail(err error) {
	if fw.err == nil {
		fw.err = err
	}
}

// The widths of a control record's counts and totals. A file beyond them
// cannot be written: moov-io/ach would keep only their last digits, and a
// reader that adds the entries up rejects the file.
const (
	maxControlAmount = 999_999_999_999 // twelve digits: $9,999,999,999.99
	maxBatchEntries  = 999_999         // a batch's entry and addenda count
	maxFileEntries   = 99_999_999      // a file's entry and addenda count
	maxFileBlocks    = 999_999         // batches, and blocks of ten records
)

// checkControl reports what of a control record's totals does not fit its
// fields; of is "the batch" or "the file".
func checkControl(of string, t totals, countLimit int64) error {
	switch {
	case t.debit > maxControlAmount || t.credit > maxControlAmount:
		return fmt.Errorf("ach: generator: %s debits %d and credits %d (cents): a control total holds twelve digits; write fewer entries or smaller amounts",
			of, t.debit, t.credit)
	case t.count > countLimit:
		return fmt.Errorf("ach: generator: %s holds %d entry and addenda records, more than its control's %d", of, t.count, countLimit)
	}
	return nil
}

// close ends the file: the last batch control, the file control and the
// filler that completes the last block of ten records.
func (fw *fileWriter) close() error {
	if fw.err != nil {
		return fw.err
	}
	fw.closeBatch()
	if fw.batches == 0 {
		return errors.New("ach: generator: a file needs at least one entry")
	}
	blocks := (fw.lines + 1 + 9) / 10
	if err := checkControl("the file", fw.file, maxFileEntries); err != nil {
		return err
	}
	if fw.batches > maxFileBlocks || blocks > maxFileBlocks {
		return fmt.Errorf("ach: generator: %d batches in %d blocks of ten records: a file control holds six digits for each (at most about 9,980,000 entries in batches of 1,000)",
			fw.batches, blocks)
	}
	if fw.adv {
		fc := moov.NewADVFileControl()
		fc.BatchCount, fc.BlockCount, fc.EntryAddendaCount = fw.batches, blocks, int(fw.file.count)
		fc.EntryHash = int(fw.file.hash % hashModulus)
		fc.TotalDebitEntryDollarAmountInFile, fc.TotalCreditEntryDollarAmountInFile = int(fw.file.debit), int(fw.file.credit)
		fw.line(fc.String())
	} else {
		fc := moov.NewFileControl()
		fc.BatchCount, fc.BlockCount, fc.EntryAddendaCount = fw.batches, blocks, int(fw.file.count)
		fc.EntryHash = int(fw.file.hash % hashModulus)
		fc.TotalDebitEntryDollarAmountInFile, fc.TotalCreditEntryDollarAmountInFile = int(fw.file.debit), int(fw.file.credit)
		fw.line(fc.String())
	}
	for fw.err == nil && fw.lines%10 != 0 {
		fw.line(fillerRecord)
	}
	if fw.err != nil {
		return fw.err
	}
	return fw.w.Flush()
}
