package iso8583

import (
	"fmt"
	"strings"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/money"
	"github.com/clearing-dev/clearing/internal/pii"
)

// keyPrefix starts every key this format makes.
const keyPrefix = "iso8583:"

// panScope is the pii scope of card numbers: a PAN is the same card
// whichever acquirer or file it arrives through.
const panScope = "pan"

// reversalSuffix is what a reversal appends to its original's key.
const reversalSuffix = ":reversal"

// mapper turns decoded messages into Records.
type mapper struct {
	hasher pii.Hasher
	years  yearOf
}

// record maps one decoded message, or says why it cannot.
func (mp *mapper) record(m *message, index, offset int64) (formats.Record, error) {
	fail := func(fe *factError) error {
		return &formats.ParseError{Line: index, Offset: offset, Field: fe.field, Err: fmt.Errorf("%w: %w", ErrInvalid, fe.err)}
	}
	f, fe := mp.facts(m)
	if fe != nil {
		return formats.Record{}, fail(fe)
	}
	rec := formats.Record{Line: index, Offset: offset, Detail: f.mti.describe(), Repeat: f.mti.repeat()}
	if f.mti.response() || f.mti.class() == classNetwork {
		rec.Kind = formats.Skip
		return rec, nil
	}
	if fe := mp.money(&f, &rec); fe != nil {
		return formats.Record{}, fail(fe)
	}
	switch f.mti.class() {
	case classAuthorisation:
		fe = mp.authorisation(&f, &rec)
	case classFinancial:
		fe = mp.financial(&f, &rec)
	default:
		fe = mp.reversal(m, &f, &rec)
	}
	if fe != nil {
		return formats.Record{}, fail(fe)
	}
	return rec, nil
}

// money fills what every keyed message needs: processing code, amount,
// currency, value date and the card.
func (mp *mapper) money(f *facts, rec *formats.Record) *factError {
	switch {
	case !f.hasProc:
		return factErr("DE3", "the processing code is missing")
	case !f.hasAmount:
		return factErr("DE4", "the amount is missing")
	case !f.hasCur:
		return factErr("DE49", "the currency code is missing")
	case !f.hasDate:
		return factErr("DE7", "no date: none of DE15, DE13 and DE7 is present")
	}
	rec.Detail += ", " + f.proc.name
	rec.Amount, rec.Currency, rec.Direction = f.amount, f.currency.Code, f.proc.dir
	rec.ValueDate = f.valueDate
	if f.pan != "" {
		rec.Account = mp.hasher.Account(panScope, f.pan)
	}
	return nil
}

// acqOrDash is the acquirer of the key.
func (f *facts) acqOrDash() string {
	if f.acq == "" {
		return "-"
	}
	return f.acq
}

func (f *facts) key() string {
	return keyPrefix + f.acqOrDash() + ":" + f.rrn + ":" + f.mti.folded()
}

// authorisation records x1xx requests and advices as notices: an approval
// moves no money.
func (mp *mapper) authorisation(f *facts, rec *formats.Record) *factError {
	if f.rrn == "" {
		return factErr("DE37", "the RRN is missing, so the message has no key")
	}
	rec.Kind, rec.Key, rec.Reference = formats.Notice, f.key(), f.rrn
	return nil
}

// financial posts x2xx requests and advices. A message that moves nothing
// (an inquiry, a zero amount) is a notice.
func (mp *mapper) financial(f *facts, rec *formats.Record) *factError {
	if f.rrn == "" {
		return factErr("DE37", "the RRN is missing, so the message has no key")
	}
	rec.Key, rec.Reference = f.key(), f.rrn
	if f.proc.inquiry || f.amount == 0 {
		rec.Kind = formats.Notice
		if !f.proc.inquiry {
			rec.Detail += " (zero amount)"
		}
		return nil
	}
	if f.pan == "" {
		return factErr("DE2", "the PAN is missing (neither DE2 nor DE35 is present), so the posting has no cardholder account")
	}
	rec.Kind = formats.Clearing
	if f.stan != "" && f.xmit != "" {
		rec.AltReference = altReference(f.mti.folded(), acquirer11(f.acq), f.stan, f.xmit)
	}
	return nil
}

// reversal maps x4xx requests and advices. The original is found through
// the RRN, narrowed by DE90's original MTI when DE90 is there, or through
// DE90 alone when the RRN is missing. A reversal of an authorisation has
// no posting to undo and is a notice.
func (mp *mapper) reversal(m *message, f *facts, rec *formats.Record) *factError {
	var orig *original
	if v, ok := m.get(fieldOriginal); ok {
		o, fe := mp.parseOriginal(v)
		if fe != nil {
			return fe
		}
		orig = &o
	}
	if f.rrn == "" && orig == nil {
		return factErr("DE37", "the reversal has neither an RRN (DE37) nor original data elements (DE90), so its original cannot be found")
	}
	if fe := mp.replacement(m, f, rec); fe != nil {
		return fe
	}
	rec.Reference = f.rrn
	rec.Key = f.key()
	if f.rrn == "" {
		rec.Key = keyPrefix + f.acqOrDash() + ":-:" + f.mti.folded() + ":" + orig.ref()
	}
	switch {
	case orig != nil && orig.mti.class() == classAuthorisation:
		rec.Kind = formats.Notice
		rec.Detail = strings.Replace(rec.Detail, ",", " of an authorisation,", 1)
		return nil
	case f.proc.inquiry:
		rec.Kind = formats.Notice
		return nil
	case rec.Amount == 0:
		rec.Kind = formats.Notice
		rec.Detail += " (nothing to reverse)"
		return nil
	}
	rec.Kind = formats.Reversal
	rec.Link = f.link(orig)
	return nil
}

func (o *original) ref() string {
	return altReference(o.mti.folded(), o.acq, o.stan, o.xmit)
}

// link finds a reversal's original. By RRN, the original is any financial
// message (0200 or 0220) of the same acquirer and RRN, or exactly the class
// DE90 names; by DE90 alone, the posting whose AltReference DE90 rebuilds.
// A reversal with both, whose RRN is its own and not the original's, finds
// the original through DE90 when its RRN finds none. More than one match is
// quarantined by the ledger, never guessed.
func (f *facts) link(orig *original) *formats.Link {
	if f.rrn != "" {
		class := "0" + string(classFinancial)
		l := &formats.Link{Reference: f.rrn, Suffix: reversalSuffix}
		if orig != nil {
			class = orig.mti.folded()
			l.Fallback, l.FallbackPrefix = orig.ref(), keyPrefix+f.acqOrDash()+":"
		}
		l.KeyPrefix = keyPrefix + f.acqOrDash() + ":" + f.rrn + ":" + class
		return l
	}
	return &formats.Link{Reference: orig.ref(), ByAlt: true, KeyPrefix: keyPrefix + f.acqOrDash() + ":", Suffix: reversalSuffix}
}

// replacement applies DE95: a partial reversal undoes only the part of DE4
// that did not take place, DE4 minus the actual amount. An actual amount of
// zero means nothing took place: the reversal is whole.
func (mp *mapper) replacement(m *message, f *facts, rec *formats.Record) *factError {
	v, ok := m.get(fieldReplacement)
	if !ok {
		return nil
	}
	if len(v) < 12 || !allDigits(v[:12]) {
		return factErr("DE95", "the actual amount (the first 12 characters) is not 12 digits")
	}
	actual, err := money.ParseMinor(v[:12])
	if err != nil {
		return &factError{field: "DE95", err: err}
	}
	switch {
	case actual > f.amount:
		return factErr("DE95", "the actual amount is larger than the amount of DE4")
	case actual == f.amount:
		rec.Amount = 0
	case actual > 0:
		rec.Amount = f.amount - actual
		rec.Detail += " (partial)"
	}
	return nil
}
