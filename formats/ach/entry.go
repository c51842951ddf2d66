package ach

import (
	"strconv"

	moov "github.com/moov-io/ach"

	"github.com/clearing-dev/clearing/formats"
)

// maxAddenda is the most addenda records one entry may carry: a CTX entry
// takes up to 9,999. It bounds what the reader holds for one entry.
const maxAddenda = 9999

// entryState is the open entry: its parsed fields and the addenda read so
// far. It is completed, checked and turned into a Record when the next
// entry, batch control or file control arrives.
type entryState struct {
	active bool
	pos
	// broken is set when the entry or one of its addenda failed a check
	// that was already reported; it yields no Record.
	broken    bool
	code      int
	tx        txCode
	amount    int64
	trace     string // 15 digits; for ADV, the advice identifier
	rdfi      string // the 8-digit RDFI routing prefix
	routing   string // the 9-digit RDFI routing number, check digit included
	account   string // the DFI account number, in clear: it leaves only hashed
	indicator int    // the addenda record indicator
	addenda   int    // addenda records read
	lastType  int    // the last IAT addenda type, which must not decrease
	link      *linkInfo
	category  string
	// The moov-io/ach record, with its addenda attached; exactly one is set.
	ed  *moov.EntryDetail
	iat *moov.IATEntryDetail
	adv *moov.ADVEntryDetail
	// secrets are the entry's personal fields, scrubbed from any message.
	secrets [3]string
}

// linkKind is what an addenda 98 or 99 makes of its entry.
type linkKind uint8

const (
	linkReturn linkKind = iota + 1
	linkDishonored
	linkContested
	linkNOC
	linkRefusedNOC
)

// linkInfo is what the reader keeps of an addenda 98 or 99.
type linkInfo struct {
	kind  linkKind
	code  string // return, dishonored, contested or change code
	trace string // the original entry's trace number
	rdfi  string // the original entry's 8-digit RDFI routing prefix
}

// entryFields are the numeric fields of an entry detail record, by
// character position: transaction code, RDFI, check digit, amount, addenda
// indicator and trace number.
type entryFields struct {
	codeAt, rdfiAt, amountFrom, amountTo, indicatorAt, traceFrom int
}

var (
	// standardFields serve IAT entries too, which keep these positions.
	standardFields = entryFields{1, 3, 29, 39, 78, 79}
	// advFields: an ADV amount is 12 digits, and positions 80-94 hold the
	// advice identifier where other entries hold the trace number.
	advFields = entryFields{1, 3, 27, 39, 78, 79}
)

// entryDetail reads an entry detail record and opens an entry.
func (r *Reader) entryDetail(rc *record) {
	p := pos{rc.line, rc.off}
	if !r.inBatch {
		r.fail(p, "", ErrStructure, "entry detail outside a batch")
		return
	}
	r.completeEntry()
	b := &r.batch
	b.entries++
	b.counted.count++
	r.entry = entryState{active: true, pos: p}
	e := &r.entry
	switch b.kind {
	case kindIAT:
		r.iatEntry(rc, e)
	case kindADV:
		r.advEntry(rc, e)
	default:
		r.standardEntry(rc, e, b.sec)
	}
	if e.broken {
		return
	}
	b.counted.hash += mustNumber(e.rdfi)
	if e.tx.dir == formats.Credit {
		b.counted.credit += e.amount
	} else {
		b.counted.debit += e.amount
	}
	if b.kind != kindADV {
		if e.trace <= b.trace {
			// moov-io/ach requires ascending trace numbers within a batch,
			// as NACHA does; two entries of one batch never share a trace.
			r.fail(p, "TraceNumber", ErrField, "TraceNumber %s does not follow %s: trace numbers ascend within a batch", e.trace, b.trace)
		}
		b.trace = e.trace
	}
}

// numericFields checks and reads the numeric fields that a Record and the
// control totals are made of. moov-io/ach reads a field such as
// "00001X0000" as zero without complaint; here it is an error.
func (r *Reader) numericFields(rc *record, e *entryState, f entryFields) bool {
	p := e.pos
	code, ok := number(rc.field(f.codeAt, f.codeAt+2))
	if !ok {
		r.fail(p, "TransactionCode", ErrField, "TransactionCode %q is not a number", rc.field(f.codeAt, f.codeAt+2))
		return false
	}
	tx, ok := lookupTx(int(code))
	if !ok {
		r.fail(p, "TransactionCode", ErrField, "TransactionCode %d is not a NACHA transaction code", code)
		return false
	}
	rdfi, check := rc.field(f.rdfiAt, f.rdfiAt+8), rc.field(f.rdfiAt+8, f.rdfiAt+9)
	if !isDigits(rdfi) || len(rdfi) != 8 || !isDigits(check) {
		r.fail(p, "RDFIIdentification", ErrField, "RDFIIdentification %q%q is not a 9-digit routing number", rdfi, check)
		return false
	}
	amount, ok := number(rc.field(f.amountFrom, f.amountTo))
	if !ok {
		r.fail(p, "Amount", ErrField, "Amount %q is not a number", rc.field(f.amountFrom, f.amountTo))
		return false
	}
	// An amount field of 10 (ADV: 12) digits cannot pass the cap; the check
	// keeps the Record contract true whatever the field widths become.
	if amount > formats.MaxAmountMinor {
		r.fail(p, "Amount", formats.ErrAmountTooLarge, "Amount %d is above %d minor units", amount, formats.MaxAmountMinor)
		return false
	}
	indicator := rc.field(f.indicatorAt, f.indicatorAt+1)
	if indicator != "0" && indicator != "1" {
		r.fail(p, "AddendaRecordIndicator", ErrField, "AddendaRecordIndicator %q is neither 0 nor 1", indicator)
		return false
	}
	trace := rc.field(f.traceFrom, f.traceFrom+15)
	if !isDigits(trace) || len(trace) != 15 {
		r.fail(p, "TraceNumber", ErrField, "TraceNumber %q is not 15 digits", trace)
		return false
	}
	e.code, e.tx, e.rdfi, e.amount, e.trace = int(code), tx, rdfi, amount, trace
	e.routing = rc.field(f.rdfiAt, f.rdfiAt+9) // moov-io/ach's Validate checks the check digit
	e.indicator = int(indicator[0] - '0')
	return true
}

// standardEntry parses an entry detail of a batch that is neither IAT nor
// ADV.
func (r *Reader) standardEntry(rc *record, e *entryState, sec string) {
	if !r.numericFields(rc, e, standardFields) {
		e.broken = true
		return
	}
	// One EntryDetail serves every entry of the file: the previous entry is
	// complete and nothing refers to it any more.
	ed := &r.ed
	*ed = moov.EntryDetail{Category: moov.CategoryForward, Addenda05: ed.Addenda05[:0]}
	ed.SetSECCode(sec)
	if r.loosen.RDFICheckDigit {
		ed.SetValidation(&moov.ValidateOpts{AllowInvalidCheckDigit: true})
	}
	ed.Parse(rc.text)
	ed.LineNumber = int(rc.line)
	e.ed, e.account, e.category = ed, ed.DFIAccountNumber, ed.Category
	e.secrets = [3]string{ed.DFIAccountNumber, ed.IndividualName, ed.IdentificationNumber}
	if err := ed.Validate(); err != nil {
		r.failMoov(e.pos, err, e.secrets[:]...)
		e.broken = true
	}
}

// completeEntry closes the open entry: it runs the rules that need the
// entry with all its addenda and queues its Record.
func (r *Reader) completeEntry() {
	e := &r.entry
	if !e.active {
		return
	}
	e.active = false
	if e.broken {
		return
	}
	if e.indicator == 1 && e.addenda == 0 {
		r.fail(e.pos, "AddendaRecordIndicator", ErrStructure, "the addenda record indicator is 1 but no addenda record follows")
		return
	}
	b := &r.batch
	if err := r.validateEntry(e); err != nil {
		r.failMoov(e.pos, err, e.secrets[:]...)
		return
	}
	if b.category == "" {
		b.category = e.category
	} else if e.category != b.category && e.category != moov.CategoryNOC {
		r.fail(e.pos, "Category", ErrField, "a %s entry in a batch of %s entries", e.category, b.category)
		return
	}
	if b.keyless {
		return
	}
	rec, ok := r.toRecord(e)
	if ok {
		r.push(result{rec: rec})
	}
}

// validateEntry runs moov-io/ach's batch rules for the entry's SEC code
// (transaction codes the SEC code allows, amounts, required and permitted
// addenda, trace number prefix, addenda sequence) on a batch holding this
// one entry and a control record made to match it. The rules that span
// entries (control totals, ascending trace numbers, one category per batch)
// are checked by the reader as it streams; this keeps the SEC code rules
// without holding a batch in memory.
func (r *Reader) validateEntry(e *entryState) error {
	b := &r.batch
	if b.std == nil && b.iat == nil {
		return nil // the header failed; its own error was reported
	}
	hash := int(mustNumber(e.rdfi))
	credit, debit := 0, 0
	if e.tx.dir == formats.Credit {
		credit = int(e.amount)
	} else {
		debit = int(e.amount)
	}
	switch b.kind {
	case kindIAT:
		b.iat.Entries = append(b.iat.Entries[:0], e.iat)
		c := b.iat.Control
		c.ServiceClassCode, c.ODFIIdentification, c.BatchNumber = b.iat.Header.ServiceClassCode, b.iat.Header.ODFIIdentification, b.iat.Header.BatchNumber
		c.EntryAddendaCount, c.EntryHash = 1+e.addenda, hash
		c.TotalCreditEntryDollarAmount, c.TotalDebitEntryDollarAmount = credit, debit
		return b.iat.Validate()
	case kindADV:
		b.std.DeleteADVEntries(func(*moov.ADVEntryDetail) bool { return true })
		b.std.AddADVEntry(e.adv)
		h, c := b.std.GetHeader(), b.std.GetADVControl()
		c.ServiceClassCode, c.ODFIIdentification, c.BatchNumber = h.ServiceClassCode, h.ODFIIdentification, h.BatchNumber
		c.EntryAddendaCount, c.EntryHash = 1+e.addenda, hash
		c.TotalCreditEntryDollarAmount, c.TotalDebitEntryDollarAmount = credit, debit
		return b.std.Validate()
	}
	// A return or notification of change keeps the trace number its
	// sender gave it, which bank-made files often start with their own
	// routing rather than the batch's ODFI; the link uses the original
	// trace in the addenda, so the prefix decides nothing.
	custom := r.loosen.ForwardTracePrefix
	if e.link != nil && e.trace[:8] != b.odfi {
		r.warn(e.pos, WarnTracePrefix, "TraceNumber %s of a %s does not start with the batch's ODFI %s", e.trace, e.category, b.odfi)
		custom = true
	}
	b.std.SetValidation(&moov.ValidateOpts{CustomTraceNumbers: custom, AllowInvalidCheckDigit: r.loosen.RDFICheckDigit})
	b.std.DeleteEntries(func(*moov.EntryDetail) bool { return true })
	b.std.AddEntry(e.ed)
	h, c := b.std.GetHeader(), b.std.GetControl()
	c.ServiceClassCode, c.CompanyIdentification = h.ServiceClassCode, h.CompanyIdentification
	c.ODFIIdentification, c.BatchNumber = h.ODFIIdentification, h.BatchNumber
	c.EntryAddendaCount, c.EntryHash = 1+e.addenda, hash
	c.TotalCreditEntryDollarAmount, c.TotalDebitEntryDollarAmount = credit, debit
	return b.std.Validate()
}

// mustNumber converts a field already checked to be digits.
func mustNumber(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
