package ach

import (
	"strconv"
	"strings"

	moov "github.com/moov-io/ach"
)

// iatHeader parses an IAT batch header, or the IAT header of a batch of IAT
// notifications of change (IAT indicator "IATCOR", SEC code COR).
func (r *Reader) iatHeader(rc *record, b *batchState) {
	b.kind = kindIAT
	bh := moov.NewIATBatchHeader()
	bh.Parse(rc.text)
	if err := bh.Validate(); err != nil {
		r.failMoov(b.pos, err)
		b.keyless = true
		return
	}
	batch := moov.NewIATBatch(bh)
	b.iat = &batch
	b.sec, b.scc = bh.StandardEntryClassCode, bh.ServiceClassCode
	// An IAT batch has no company identification; the originator
	// identification sits in the same positions and names the originator
	// in the same way.
	b.company = strings.TrimSpace(rc.field(40, 50))
	if bh.ISOOriginatingCurrencyCode != "USD" && bh.ISODestinationCurrencyCode != "USD" {
		// The amount of an IAT entry is in US dollars on its US leg, so one
		// of the two currencies is USD; a batch where neither is cannot be
		// read as dollars without guessing.
		r.fail(b.pos, "ISODestinationCurrencyCode", ErrField,
			"neither ISOOriginatingCurrencyCode %q nor ISODestinationCurrencyCode %q is USD",
			bh.ISOOriginatingCurrencyCode, bh.ISODestinationCurrencyCode)
		b.keyless = true
	}
}

// iatEntry parses an IAT entry detail.
func (r *Reader) iatEntry(rc *record, e *entryState) {
	if !r.numericFields(rc, e, standardFields) {
		e.broken = true
		return
	}
	if !isDigits(rc.field(12, 16)) {
		r.fail(e.pos, "AddendaRecords", ErrField, "AddendaRecords %q is not a number", rc.field(12, 16))
		e.broken = true
		return
	}
	ed := moov.NewIATEntryDetail()
	ed.Parse(rc.text)
	ed.LineNumber = int(rc.line)
	e.iat, e.account, e.category = ed, ed.DFIAccountNumber, ed.Category
	e.secrets = [3]string{ed.DFIAccountNumber}
	if err := ed.Validate(); err != nil {
		r.failMoov(e.pos, err, e.secrets[:]...)
		e.broken = true
	}
}

// iatAddenda handles the addenda of an IAT entry: the seven mandatory
// records 10 to 16 once each, up to two 17 and five 18 (counted by
// moov-io/ach's batch rules), and a 98 or 99, in ascending type order as
// NACHA lays them out.
func (r *Reader) iatAddenda(rc *record, e *entryState) bool {
	p := pos{rc.line, rc.off}
	typ := rc.field(1, 3)
	n, err := strconv.Atoi(typ)
	if err != nil || !isDigits(typ) || ((n < 10 || n > 18) && n != 98 && n != 99) {
		r.fail(p, "TypeCode", ErrStructure, "addenda type %q is not allowed in an IAT batch", typ)
		return false
	}
	if n < e.lastType || (n == e.lastType && n <= 16) {
		r.fail(p, "TypeCode", ErrStructure, "addenda %02d after addenda %02d for the entry of line %d", n, e.lastType, e.line)
		return false
	}
	e.lastType = n
	switch n {
	case 98:
		return r.addenda98(rc, e)
	case 99:
		return r.addenda99(rc, e)
	}
	var v interface{ Validate() error }
	switch n {
	case 10:
		a := moov.NewAddenda10()
		a.Parse(rc.text)
		e.iat.Addenda10, v = a, a
	case 11:
		a := moov.NewAddenda11()
		a.Parse(rc.text)
		e.iat.Addenda11, v = a, a
	case 12:
		a := moov.NewAddenda12()
		a.Parse(rc.text)
		e.iat.Addenda12, v = a, a
	case 13:
		a := moov.NewAddenda13()
		a.Parse(rc.text)
		e.iat.Addenda13, v = a, a
	case 14:
		a := moov.NewAddenda14()
		a.Parse(rc.text)
		e.iat.Addenda14, v = a, a
	case 15:
		a := moov.NewAddenda15()
		a.Parse(rc.text)
		e.iat.Addenda15, v = a, a
	case 16:
		a := moov.NewAddenda16()
		a.Parse(rc.text)
		e.iat.Addenda16, v = a, a
	case 17:
		a := moov.NewAddenda17()
		a.Parse(rc.text)
		e.iat.AddAddenda17(a)
		v = a
	default:
		a := moov.NewAddenda18()
		a.Parse(rc.text)
		e.iat.AddAddenda18(a)
		v = a
	}
	return r.validAddenda(p, e, v.Validate())
}
