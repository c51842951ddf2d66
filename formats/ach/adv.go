package ach

import (
	moov "github.com/moov-io/ach"
)

// advEntry parses an ADV entry detail. An ADV entry has no trace number; the
// reader keys it by its ACH operator routing number, Julian day and sequence
// number, which together take the 15 characters where other entries carry
// their trace number (see docs/decisions/ach-adv-key.md).
func (r *Reader) advEntry(rc *record, e *entryState) {
	if !r.numericFields(rc, e, advFields) {
		e.broken = true
		return
	}
	if day := mustNumber(rc.field(87, 90)); day < 1 || day > 366 {
		r.fail(e.pos, "JulianDay", ErrField, "JulianDay %q is not a day of the year", rc.field(87, 90))
		e.broken = true
		return
	}
	ed := moov.NewADVEntryDetail()
	ed.Parse(rc.text)
	ed.LineNumber = int(rc.line)
	e.adv, e.account, e.category = ed, ed.DFIAccountNumber, ed.Category
	e.secrets = [3]string{ed.DFIAccountNumber, ed.IndividualName}
	if err := ed.Validate(); err != nil {
		r.failMoov(e.pos, err, e.secrets[:]...)
		e.broken = true
	}
}
