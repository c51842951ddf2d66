package ach

import (
	moov "github.com/moov-io/ach"
)

// addenda reads an addenda record and attaches it to the open entry.
func (r *Reader) addenda(rc *record) {
	p := pos{rc.line, rc.off}
	if !r.inBatch {
		r.fail(p, "", ErrStructure, "addenda outside a batch")
		return
	}
	b := &r.batch
	b.counted.count++
	e := &r.entry
	switch {
	case !e.active:
		r.fail(p, "", ErrStructure, "addenda before the first entry detail of the batch of line %d", b.line)
		return
	case e.broken:
		// The entry's own error was reported; its indicator may not have
		// been read, so the addenda is only counted.
		return
	case e.indicator != 1:
		r.fail(p, "", ErrStructure, "addenda after the entry of line %d, whose addenda record indicator is 0", e.line)
		e.broken = true
		return
	}
	e.addenda++
	if e.addenda > maxAddenda {
		r.fail(p, "", ErrStructure, "more than %d addenda records follow the entry of line %d", maxAddenda, e.line)
		e.broken = true
		return
	}
	var ok bool
	switch b.kind {
	case kindIAT:
		ok = r.iatAddenda(rc, e)
	case kindADV:
		r.fail(p, "", ErrUnsupported, "an addenda record on an ADV entry")
	default:
		ok = r.standardAddenda(rc, e, b.sec)
	}
	if !ok {
		e.broken = true
	}
}

// standardAddenda handles addenda types 02, 05, 98 and 99. moov-io/ach's
// Reader ignores an addenda of any other type without a word; here it is an
// error.
func (r *Reader) standardAddenda(rc *record, e *entryState, sec string) bool {
	p := pos{rc.line, rc.off}
	switch typ := rc.field(1, 3); typ {
	case "02":
		if e.ed.Addenda02 != nil {
			r.fail(p, "", ErrStructure, "a second addenda 02 for the entry of line %d", e.line)
			return false
		}
		a := moov.NewAddenda02()
		a.Parse(rc.text)
		e.ed.Addenda02 = a
		return r.validAddenda(p, e, a.Validate())
	case "05":
		a := moov.NewAddenda05()
		a.Parse(rc.text)
		e.ed.AddAddenda05(a)
		return r.validAddenda(p, e, a.Validate(), a.PaymentRelatedInformation)
	case "98":
		return r.addenda98(rc, e)
	case "99":
		return r.addenda99(rc, e)
	default:
		r.fail(p, "TypeCode", ErrStructure, "addenda type %q is not allowed in a %s batch", typ, sec)
		return false
	}
}

// validAddenda reports a failed addenda validation.
func (r *Reader) validAddenda(p pos, e *entryState, err error, secrets ...string) bool {
	if err == nil {
		return true
	}
	r.failMoov(p, err, append(secrets, e.secrets[:]...)...)
	return false
}

// addenda98 handles a notification of change or a refused one. The change
// code decides which, as in moov-io/ach.
func (r *Reader) addenda98(rc *record, e *entryState) bool {
	p := pos{rc.line, rc.off}
	if !r.firstLink(p, e) {
		return false
	}
	code := rc.field(3, 6)
	info := &linkInfo{kind: linkNOC, code: code}
	var err error
	if e.ed != nil && moov.IsRefusedChangeCode(code) {
		a := moov.NewAddenda98Refused()
		a.Parse(rc.text)
		info.kind, err = linkRefusedNOC, a.Validate()
		e.ed.Addenda98Refused = a
	} else {
		// IAT entries take only plain notifications of change, as in
		// moov-io/ach.
		a := moov.NewAddenda98()
		a.Parse(rc.text)
		err = a.Validate()
		if e.ed != nil {
			e.ed.Addenda98 = a
		} else {
			e.iat.Addenda98 = a
		}
	}
	if !r.validAddenda(p, e, err) {
		return false
	}
	r.setCategory(e, moov.CategoryNOC)
	return r.original(rc, e, info)
}

// addenda99 handles a return, a dishonored return or a contested dishonored
// return. The return code decides which, as in moov-io/ach.
func (r *Reader) addenda99(rc *record, e *entryState) bool {
	p := pos{rc.line, rc.off}
	if !r.firstLink(p, e) {
		return false
	}
	code := rc.field(3, 6)
	info := &linkInfo{code: code}
	var err error
	switch {
	case e.iat != nil:
		// moov-io/ach knows only plain returns for IAT entries.
		a := moov.NewAddenda99()
		a.Parse(rc.text)
		info.kind, err = linkReturn, a.Validate()
		e.iat.Addenda99 = a
		r.setCategory(e, moov.CategoryReturn)
	case moov.IsDishonoredReturnCode(code):
		a := moov.NewAddenda99Dishonored()
		a.Parse(rc.text)
		info.kind, err = linkDishonored, a.Validate()
		e.ed.Addenda99Dishonored = a
		r.setCategory(e, moov.CategoryDishonoredReturn)
	case moov.IsContestedReturnCode(code):
		a := moov.NewAddenda99Contested()
		a.Parse(rc.text)
		info.kind, err = linkContested, a.Validate()
		e.ed.Addenda99Contested = a
		r.setCategory(e, moov.CategoryDishonoredReturnContested)
	default:
		a := moov.NewAddenda99()
		a.Parse(rc.text)
		info.kind, err = linkReturn, a.Validate()
		e.ed.Addenda99 = a
		r.setCategory(e, moov.CategoryReturn)
	}
	if !r.validAddenda(p, e, err) {
		return false
	}
	return r.original(rc, e, info)
}

// firstLink refuses a second addenda 98 or 99 on one entry. moov-io/ach
// keeps the last of them and so lets one entry claim two originals or two
// return reasons; which one the sender meant cannot be told.
func (r *Reader) firstLink(p pos, e *entryState) bool {
	if e.link == nil {
		return true
	}
	r.fail(p, "TypeCode", ErrStructure, "a second addenda 98 or 99 for the entry of line %d", e.line)
	return false
}

// original reads the original trace number and RDFI routing prefix of an
// addenda 98 or 99, which sit at the same positions in every variant: the
// trace at 7-21 and the routing prefix at 28-35.
func (r *Reader) original(rc *record, e *entryState, info *linkInfo) bool {
	p := pos{rc.line, rc.off}
	trace, rdfi := rc.field(6, 21), rc.field(27, 35)
	if !isDigits(trace) || len(trace) != 15 {
		r.fail(p, "OriginalTrace", ErrField, "OriginalTrace %q is not 15 digits", trace)
		return false
	}
	if !isDigits(rdfi) || len(rdfi) != 8 {
		r.fail(p, "OriginalDFI", ErrField, "OriginalDFI %q is not 8 digits", rdfi)
		return false
	}
	info.trace, info.rdfi = trace, rdfi
	e.link = info
	return true
}

// setCategory records the moov-io/ach category that an addenda 98 or 99
// gives its entry, on the entry and on the moov-io/ach record, whose batch
// rules depend on it.
func (r *Reader) setCategory(e *entryState, category string) {
	e.category = category
	switch {
	case e.ed != nil:
		e.ed.Category = category
	case e.iat != nil:
		e.iat.Category = category
	}
}
