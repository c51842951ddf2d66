package iso8583

import (
	"fmt"
	"strings"
	"time"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/money"
)

// facts are the checked values of one message. Every data element the
// reader interprets is checked whenever it is present, in every message
// class: a wrong spec decodes garbage without an error, and these checks
// are what catch it.
type facts struct {
	mti       mti
	proc      procCode
	procRaw   string
	hasProc   bool
	amount    int64
	hasAmount bool
	currency  money.Currency
	hasCur    bool
	valueDate time.Time
	hasDate   bool
	stan      string
	xmit      string // DE7, MMDDhhmmss
	acq       string // DE32 as sent; "" when absent
	rrn       string // "" when absent
	pan       string // clear; never leaves this package
}

// factError names the data element a check failed on.
type factError struct {
	field string
	err   error
}

func factErr(field, format string, args ...any) *factError {
	return &factError{field: field, err: fmt.Errorf(format, args...)}
}

// maxAmountDigits keeps amounts inside int64.
const maxAmountDigits = 18

func (mp *mapper) facts(m *message) (facts, *factError) {
	var f facts
	t, err := parseMTI(m.mti)
	if err != nil {
		return f, &factError{field: "MTI", err: err}
	}
	f.mti = t
	// Responses and network management messages are not intents and are
	// skipped, so their processing code is not looked up: a code the
	// reader cannot post (a national-use code such as 18) does not refuse
	// the file. Their amount and currency are still checked, as a sign
	// that the spec decodes the file.
	skipped := t.response() || t.class() == classNetwork
	if v, ok := m.get(fieldProcessingCode); ok && !skipped {
		if f.proc, err = lookupProcessingCode(v); err != nil {
			return f, &factError{field: "DE3", err: err}
		}
		f.procRaw, f.hasProc = v, true
	}
	if v, ok := m.get(fieldAmount); ok {
		if v == "" || len(v) > maxAmountDigits || !allDigits(v) {
			return f, factErr("DE4", "the amount is not 1 to %d digits", maxAmountDigits)
		}
		if f.amount, err = money.ParseMinor(v); err != nil {
			return f, &factError{field: "DE4", err: err}
		}
		// DE4 is 12 digits in ISO 8583:1987, below the cap; a spec that
		// widens it may not widen what one record can carry.
		if err := formats.CheckAmount(f.amount); err != nil {
			return f, &factError{field: "DE4", err: err}
		}
		f.hasAmount = true
	}
	if v, ok := m.get(fieldCurrency); ok {
		if f.currency, err = currency(v); err != nil {
			return f, &factError{field: "DE49", err: err}
		}
		f.hasCur = true
	}
	if fe := mp.dates(m, &f); fe != nil {
		return f, fe
	}
	return f, mp.identity(m, &f)
}

func currency(v string) (money.Currency, error) {
	if len(v) != 3 || !allDigits(v) {
		return money.Currency{}, fmt.Errorf("the currency code is not three digits")
	}
	c, err := money.LookupCurrency(v)
	if err != nil {
		return c, fmt.Errorf("currency %s is not a known ISO 4217 numeric code", v)
	}
	if c.Code == "XXX" {
		return c, fmt.Errorf("currency %s (XXX) means no currency is involved", v)
	}
	return c, nil
}

// dates checks DE7, DE12, DE13 and DE15 and picks the value date: the
// settlement date (DE15), else the local transaction date (DE13), else the
// day of the transmission date and time (DE7).
func (mp *mapper) dates(m *message, f *facts) *factError {
	if v, ok := m.get(fieldTransmission); ok {
		if !mp.years.validDateTime(v) {
			return factErr("DE7", "the transmission date and time is not a valid MMDDhhmmss")
		}
		f.xmit = v
	}
	if v, ok := m.get(fieldLocalTime); ok && !validClock(v) {
		return factErr("DE12", "the local time is not a valid hhmmss")
	}
	for _, c := range []struct {
		id   int
		name string
	}{{fieldSettlementDate, "DE15"}, {fieldLocalDate, "DE13"}} {
		v, ok := m.get(c.id)
		if !ok {
			continue
		}
		d, valid := mp.years.date(v)
		if !valid {
			return factErr(c.name, "the date is not a valid MMDD within the year up to %s", mp.years.limit.Format(time.DateOnly))
		}
		if !f.hasDate {
			f.valueDate, f.hasDate = d, true
		}
	}
	if !f.hasDate && f.xmit != "" {
		f.valueDate, _ = mp.years.date(f.xmit[:4])
		f.hasDate = true
	}
	return nil
}

// identity checks the data elements that identify the message and its
// card: DE11, DE32, DE37 and the PAN from DE2 or DE35.
func (mp *mapper) identity(m *message, f *facts) *factError {
	if v, ok := m.get(fieldSTAN); ok {
		if len(v) != 6 || !allDigits(v) {
			return factErr("DE11", "the STAN is not six digits")
		}
		f.stan = v
	}
	if v, ok := m.get(fieldAcquirer); ok && v != "" {
		if len(v) > 11 || !allDigits(v) {
			return factErr("DE32", "the acquiring institution code is not 1 to 11 digits")
		}
		f.acq = v
	}
	if v, ok := m.get(fieldRRN); ok && strings.Trim(v, " ") != "" {
		if !validRRN(v) {
			return factErr("DE37", "the retrieval reference number is not 12 letters or digits")
		}
		f.rrn = v
	}
	if v, ok := m.get(fieldPAN); ok {
		if !validPAN(v) {
			return factErr("DE2", "the PAN is not 8 to 19 digits")
		}
		f.pan = v
	} else if v, ok := m.get(fieldTrack2); ok {
		pan := v
		if i := strings.IndexAny(v, "=D"); i >= 0 {
			pan = v[:i]
		}
		if !validPAN(pan) {
			return factErr("DE35", "track 2 does not start with a PAN of 8 to 19 digits")
		}
		f.pan = pan
	}
	return nil
}

func validRRN(v string) bool {
	if len(v) != 12 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

func validPAN(v string) bool { return len(v) >= 8 && len(v) <= 19 && allDigits(v) }

// original is DE90, the original data elements of a reversal.
type original struct {
	mti  mti
	stan string
	xmit string
	acq  string // 11 digits, zero-filled
}

// parseOriginal checks DE90: original MTI (4), STAN (6), transmission date
// and time (10), acquirer (11) and forwarding institution (11).
func (mp *mapper) parseOriginal(v string) (original, *factError) {
	if len(v) != 42 || !allDigits(v) {
		return original{}, factErr("DE90", "the original data elements are not 42 digits")
	}
	t, err := parseMTI(v[:4])
	if err != nil {
		return original{}, factErr("DE90", "original %v", err)
	}
	if c := t.class(); c != classFinancial && c != classAuthorisation {
		return original{}, factErr("DE90", "original MTI %s: only financial (02xx) and authorisation (01xx) messages can be reversed", t)
	}
	if !mp.years.validDateTime(v[10:20]) {
		return original{}, factErr("DE90", "the original transmission date and time is not a valid MMDDhhmmss")
	}
	return original{mti: t, stan: v[4:10], xmit: v[10:20], acq: v[20:31]}, nil
}

// altReference is how a reversal without an RRN finds its original:
// class, acquirer (11 digits, zero-filled), STAN and transmission date and
// time. An original builds it from its own DE32, DE11 and DE7; a reversal
// from its DE90.
func altReference(class, acq11, stan, xmit string) string {
	return class + ":" + acq11 + ":" + stan + ":" + xmit
}

// acquirer11 zero-fills DE32 to the 11 digits DE90 carries.
func acquirer11(acq string) string {
	if len(acq) >= 11 {
		return acq
	}
	return strings.Repeat("0", 11-len(acq)) + acq
}
