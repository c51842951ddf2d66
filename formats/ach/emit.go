package ach

import (
	"strconv"

	"github.com/clearing-dev/clearing/formats"
)

// Currency is the currency of every ACH amount: the network settles in US
// dollars, IAT entries included (an IAT amount is the dollar amount of the
// entry's US leg).
const Currency = "USD"

// toRecord turns a complete, valid entry into a Record (see
// docs/formats/ach.md for the mapping).
func (r *Reader) toRecord(e *entryState) (formats.Record, bool) {
	b := &r.batch
	rec := formats.Record{
		Reference: e.trace,
		Amount:    e.amount,
		Currency:  Currency,
		Direction: e.tx.dir,
		Line:      e.line,
		Offset:    e.off,
	}
	if e.link != nil {
		r.linked(e, &rec)
	} else if !r.unlinked(e, &rec) {
		return formats.Record{}, false
	}
	switch {
	case b.hasDate:
		rec.ValueDate = b.date
	case rec.Kind != formats.Clearing && !r.file.created.IsZero():
		// Return, notification and enrollment batches often carry no
		// effective entry date. A return posts under a key derived from its
		// original's and a notice posts nothing, so the date only dates the
		// record: the day the file was created is the day its sender made
		// it. The key keeps 0000-00-00, so that a re-sent file, with another
		// creation date, still yields the same key.
		rec.ValueDate = r.file.created
	default:
		// A forward entry's key needs its date; and without a valid file
		// header there is no creation date to date anything else by.
		r.fail(e.pos, "EffectiveEntryDate", ErrField,
			"the batch of line %d has no effective entry date, which this %s entry needs", b.line, b.sec)
		return formats.Record{}, false
	}
	if b.keyPrefix == "" {
		b.keyPrefix = keyWithDate(b.company, b.dateKey, "")
	}
	rec.Key = b.keyPrefix + e.trace
	return rec, true
}

// linked maps an entry with an addenda 98 or 99: a return of some kind or a
// notification of change. Its account is named by the original entry's RDFI
// (in the addenda), not by the entry's own RDFI field, which on a return or
// notification names the bank it is sent back to; so the hash matches the
// original entry's account.
func (r *Reader) linked(e *entryState, rec *formats.Record) {
	b := &r.batch
	l := e.link
	rec.Account = r.hasher.Account(routing9(l.rdfi), e.account)
	rec.Link = &formats.Link{Reference: l.trace, KeyPrefix: KeyPrefix(b.company)}
	switch l.kind {
	case linkNOC, linkRefusedNOC:
		rec.Kind, rec.Reference = formats.Notice, l.trace
		rec.Link.Suffix, rec.Detail = ":noc", "NOC "+l.code
		if l.kind == linkRefusedNOC {
			rec.Link.Suffix, rec.Detail = ":noc:refused", "refused NOC "+l.code
		}
		return
	case linkDishonored:
		rec.Link.Suffix, rec.Detail = ":return:dishonored", "dishonored return "+l.code
	case linkContested:
		rec.Link.Suffix, rec.Detail = ":return:dishonored:contested", "contested dishonored return "+l.code
	default:
		rec.Link.Suffix, rec.Detail = ":return", "return "+l.code
	}
	rec.Kind = formats.Return
	if e.amount == 0 {
		// The return of a prenote or of a zero-dollar entry moves no money.
		rec.Kind, rec.Detail = formats.Notice, rec.Detail+" (zero amount)"
	}
}

// unlinked maps an entry without an addenda 98 or 99.
func (r *Reader) unlinked(e *entryState, rec *formats.Record) bool {
	b := &r.batch
	rec.Account = r.hasher.Account(e.routing, e.account)
	switch {
	case e.tx.class == txReturnNOC && e.amount > 0:
		r.fail(e.pos, "TransactionCode", ErrField,
			"TransactionCode %d is for returns and notifications of change, but the entry has no addenda 98 or 99", e.code)
		return false
	case e.tx.class == txPrenote || e.amount == 0:
		rec.Kind = formats.Notice
	default:
		rec.Kind = formats.Clearing
	}
	rec.Detail = b.detail(e.code, e.tx, rec.Kind)
	return true
}

// detail returns the Detail of an entry without an addenda 98 or 99, such
// as "PPD 22 credit", "prenote PPD 23" or "ACK 24 zero-dollar". The batch
// keeps the texts it has made, so that a batch of a million entries does not
// build the same few strings a million times.
func (b *batchState) detail(code int, tx txCode, kind formats.Kind) string {
	k := code
	if kind == formats.Notice {
		k += 100
	}
	if s, ok := b.details[k]; ok {
		return s
	}
	label := b.sec + " " + strconv.Itoa(code)
	var s string
	switch {
	case tx.class == txPrenote:
		s = "prenote " + label
	case kind == formats.Notice:
		s = label + " zero-dollar"
	default:
		s = label + " " + word(tx.dir)
	}
	if b.details == nil {
		b.details = make(map[int]string)
	}
	b.details[k] = s
	return s
}
