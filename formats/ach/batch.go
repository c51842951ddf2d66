package ach

import (
	"fmt"
	"strings"
	"time"

	moov "github.com/moov-io/ach"
)

// batchKind is the record layout of a batch's entries.
type batchKind uint8

const (
	kindStandard batchKind = iota
	kindIAT
	kindADV
)

// batchState is what the reader keeps of the open batch.
type batchState struct {
	pos
	kind    batchKind
	sec     string // standard entry class code
	company string // company (IAT: originator) identification, trimmed
	scc     int    // service class code
	odfi    string // 8-digit ODFI routing prefix
	number  int64
	hasDate bool
	date    time.Time
	dateKey string // the date segment of the batch's keys
	// keyless is set when the header is too broken to key entries: they are
	// still checked, so that one pass reports their errors, but yield no
	// Records.
	keyless bool
	// broken is set by any error inside the batch: its control totals are
	// then not compared, since a skipped record would make them fail too.
	broken   bool
	counted  totals
	entries  int64
	trace    string // the last trace number, which must ascend
	category string // moov-io/ach category of the first entry
	// One-entry moov-io/ach batches that run the SEC code's rules on each
	// entry as it completes (see validateEntry).
	std moov.Batcher
	iat *moov.IATBatch
	// keyPrefix ("ach:<company>:<date>:") and details are made once per
	// batch.
	keyPrefix string
	details   map[int]string
}

// batchHeader reads a batch header and opens a batch.
func (r *Reader) batchHeader(rc *record) {
	p := pos{rc.line, rc.off}
	if r.inBatch {
		r.completeEntry()
		r.fail(p, "", ErrStructure, "batch header before the batch control of the batch of line %d", r.batch.line)
	}
	r.batch = batchState{pos: p}
	r.inBatch = true
	b := &r.batch
	if rc.field(50, 53) == moov.IAT || strings.TrimSpace(rc.field(4, 20)) == moov.IATCOR {
		r.iatHeader(rc, b)
	} else {
		r.standardHeader(rc, b)
	}
	if b.keyless {
		return
	}
	r.checkCompany(p, b)
	r.checkEffectiveDate(rc, b)
	r.checkBatchNumber(rc, b)
	if odfi := rc.field(79, 87); isDigits(odfi) && len(odfi) == 8 {
		b.odfi = odfi
	} else {
		r.fail(p, "ODFIIdentification", ErrField, "ODFIIdentification %q is not 8 digits", odfi)
		b.keyless = true
	}
	isADV := b.kind == kindADV
	if !r.file.kindKnown {
		r.file.adv, r.file.kindKnown = isADV, true
	} else if isADV != r.file.adv {
		r.fail(p, "StandardEntryClassCode", ErrStructure, "ADV and other batches in one file")
		b.keyless = true
	}
}

// standardHeader parses a non-IAT batch header.
func (r *Reader) standardHeader(rc *record, b *batchState) {
	bh := moov.NewBatchHeader()
	bh.Parse(rc.text)
	if bh.StandardEntryClassCode == moov.ADV {
		// Set before validation, so that the entries of a broken ADV
		// header are still read with the ADV layout.
		b.kind = kindADV
	}
	if err := bh.Validate(); err != nil {
		r.failMoov(b.pos, err)
		b.keyless = true
		return
	}
	batch, err := moov.NewBatch(bh)
	if err != nil {
		r.failMoov(b.pos, err)
		b.keyless = true
		return
	}
	b.std = batch
	b.sec, b.scc = bh.StandardEntryClassCode, bh.ServiceClassCode
	b.company = strings.TrimSpace(rc.field(40, 50))
}

// checkCompany requires a company identification that can key entries.
func (r *Reader) checkCompany(p pos, b *batchState) {
	switch {
	case b.company == "":
		r.fail(p, "CompanyIdentification", ErrField, "CompanyIdentification is blank")
		b.keyless = true
	case strings.Contains(b.company, ":"):
		// The key separates its parts with colons; a colon inside the
		// company identification would let one company's key prefix match
		// another company's keys.
		r.fail(p, "CompanyIdentification", ErrField, "CompanyIdentification %q contains a colon", b.company)
		b.keyless = true
	}
}

// checkEffectiveDate reads the effective entry date. A date of zeros or
// spaces is allowed here and refused later for entries that need it.
func (r *Reader) checkEffectiveDate(rc *record, b *batchState) {
	raw := rc.field(69, 75)
	if dateAbsent(raw) {
		b.dateKey = noDateKey
		return
	}
	d, ok := parseDate(raw)
	if !ok {
		r.fail(b.pos, "EffectiveEntryDate", ErrField, "EffectiveEntryDate %q is not a date (YYMMDD)", raw)
		b.keyless = true
		return
	}
	b.hasDate, b.date, b.dateKey = true, d, d.Format(time.DateOnly)
}

// checkBatchNumber reads the batch number. NACHA wants batch numbers to
// ascend through the file, and moov-io/ach refuses them otherwise, but no
// key or total depends on them (banks send a single batch numbered 0), so
// an order that breaks the rule is a warning.
func (r *Reader) checkBatchNumber(rc *record, b *batchState) {
	n, ok := number(rc.field(87, 94))
	if !ok {
		r.warn(b.pos, WarnBatchNumber, "BatchNumber %q is not a number", rc.field(87, 94))
		b.number = -1
		return
	}
	switch {
	case n == 0:
		r.warn(b.pos, WarnBatchNumber, "BatchNumber is 0")
	case n <= r.file.lastBatch:
		r.warn(b.pos, WarnBatchNumber, "BatchNumber %d does not follow batch number %d", n, r.file.lastBatch)
	}
	b.number = n
	r.file.lastBatch = max(n, r.file.lastBatch)
}

// batchControl reads a batch control record, compares it with the batch it
// closes, and adds the batch to the file's totals.
func (r *Reader) batchControl(rc *record) {
	p := pos{rc.line, rc.off}
	if !r.inBatch {
		r.fail(p, "", ErrStructure, "batch control outside a batch")
		return
	}
	r.completeEntry()
	b := &r.batch
	if b.entries == 0 {
		r.fail(p, "", ErrStructure, "the batch of line %d has no entry detail record", b.line)
	}
	c, ok := r.parseBatchControl(rc, b)
	if ok && !b.broken {
		var m mismatch
		m.check("ServiceClassCode", c.scc, int64(b.scc))
		if b.kind == kindStandard {
			m.checkString("CompanyIdentification", c.company, b.company)
		}
		m.checkString("ODFIIdentification", c.odfi, b.odfi)
		m.check("EntryAddendaCount", c.count, b.counted.count)
		m.check("EntryHash", c.hash, b.counted.hash%hashModulus)
		m.check("TotalDebitEntryDollarAmount", c.debit, b.counted.debit)
		m.check("TotalCreditEntryDollarAmount", c.credit, b.counted.credit)
		if b.number >= 0 {
			// moov-io/ach refuses a batch whose control numbers it otherwise
			// than its header, and reads a number that is not one as 0.
			m.checkString("BatchNumber", rc.field(87, 94), fmt.Sprintf("%07d", b.number))
		}
		if len(m.parts) > 0 {
			r.fail(p, m.field, ErrControl, "batch control of the batch of line %d: %s", b.line, m.String())
		}
	}
	r.inBatch = false
	r.file.batches++
	r.file.totals.add(b.counted)
}

// batchTotals are the fields of a batch control record.
type batchTotals struct {
	scc, count, hash, debit, credit int64
	company, odfi                   string
}

// parseBatchControl parses and validates a batch control record.
func (r *Reader) parseBatchControl(rc *record, b *batchState) (batchTotals, bool) {
	p := pos{rc.line, rc.off}
	debitTo, creditTo := 32, 44
	var err error
	if b.kind == kindADV {
		debitTo, creditTo = 40, 60
		bc := moov.NewADVBatchControl()
		bc.Parse(rc.text)
		err = bc.Validate()
	} else {
		bc := moov.NewBatchControl()
		bc.Parse(rc.text)
		err = bc.Validate()
	}
	if err != nil {
		r.failMoov(p, err)
		return batchTotals{}, false
	}
	var c batchTotals
	fields := []struct {
		name     string
		from, to int
		dst      *int64
	}{
		{"ServiceClassCode", 1, 4, &c.scc},
		{"EntryAddendaCount", 4, 10, &c.count},
		{"EntryHash", 10, 20, &c.hash},
		{"TotalDebitEntryDollarAmount", 20, debitTo, &c.debit},
		{"TotalCreditEntryDollarAmount", debitTo, creditTo, &c.credit},
	}
	for _, f := range fields {
		v, ok := number(rc.field(f.from, f.to))
		if !ok {
			r.fail(p, f.name, ErrField, "%s %q is not a number", f.name, rc.field(f.from, f.to))
			return batchTotals{}, false
		}
		*f.dst = v
	}
	c.company = strings.TrimSpace(rc.field(44, 54))
	c.odfi = rc.field(79, 87)
	return c, true
}
