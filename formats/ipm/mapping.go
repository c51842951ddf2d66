package ipm

import (
	"fmt"
	"strings"
	"time"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/money"
	"github.com/clearing-dev/clearing/internal/pii"
)

// keyPrefix starts every key this format makes.
const keyPrefix = "ipm:"

// panScope is the pii scope of card numbers, the same as formats/iso8583's:
// a PAN is the same card whichever file it arrives in.
const panScope = "pan"

// The link suffixes of the lifecycle. A chargeback, a second presentment
// and an arbitration chargeback each undo the step before them, so each
// posts under its first presentment's key plus the suffix of its stage; a
// reversal appends reversalSuffix to the stage it reverses.
// docs/decisions/ipm-lifecycle-links.md says why.
const (
	suffixChargeback  = ":chargeback"
	suffixSecond      = suffixChargeback + ":second_presentment"
	suffixArbitration = suffixSecond + ":arbitration"
	reversalSuffix    = ":reversal"
)

// stage is one kind of financial message: its MTI and function code.
type stage struct {
	name   string
	suffix string // "" for a first presentment
}

// stages are the financial messages of the card lifecycle, by MTI/DE24.
var stages = map[string]stage{
	"1240/200": {"first presentment", ""},
	"1442/450": {"first chargeback (full)", suffixChargeback},
	"1442/453": {"first chargeback (partial)", suffixChargeback},
	"1240/205": {"second presentment (full)", suffixSecond},
	"1240/282": {"second presentment (partial)", suffixSecond},
	"1442/451": {"arbitration chargeback (full)", suffixArbitration},
	"1442/454": {"arbitration chargeback (partial)", suffixArbitration},
}

// feeFunctions are the function codes of 1740 fee collections.
var feeFunctions = map[string]string{
	"700": "fee collection (member-generated)",
	"780": "fee collection return",
	"781": "fee collection resubmission",
	"782": "fee collection arbitration return",
	"783": "fee collection (clearing system)",
	"790": "funds transfer",
	"791": "funds transfer backout",
}

// processing is what the first two digits of DE3 say about the card's
// side: a purchase debits the cardholder, a refund or payment credits it.
var processing = map[string]formats.Direction{
	"00": formats.Debit, "01": formats.Debit, "09": formats.Debit, "12": formats.Debit,
	"17": formats.Debit, "18": formats.Debit,
	"20": formats.Credit, "28": formats.Credit,
}

// feeProcessing is DE3 of a fee collection, seen from the receiver: 19
// credits the originator, so it debits the receiver; 29 the reverse.
var feeProcessing = map[string]formats.Direction{"19": formats.Debit, "29": formats.Credit}

// mapper turns decoded messages into Records.
type mapper struct {
	hasher    pii.Hasher
	statement bool
}

// mapError is a mapping failure about one field.
type mapError struct {
	field string
	text  string
}

func mapErr(field, format string, args ...any) *mapError {
	return &mapError{field: field, text: fmt.Sprintf(format, args...)}
}

// record maps one decoded message whose PDSs are split.
func (mp *mapper) record(m *message) (formats.Record, *mapError) {
	de24, _ := m.get(24)
	fn := m.mti + "/" + de24
	var rec formats.Record
	switch m.mti {
	case mtiAdmin:
		return mp.admin(m, de24)
	case "1240", "1442":
		st, ok := stages[fn]
		if !ok {
			return rec, mapErr("DE24", "unknown function code %s for MTI %s", de24, m.mti)
		}
		return mp.financial(m, fn, st)
	case "1740":
		name, ok := feeFunctions[de24]
		if !ok {
			return rec, mapErr("DE24", "unknown function code %s for a fee collection (1740)", de24)
		}
		return mp.fee(m, fn, name)
	}
	return rec, mapErr("MTI", "unknown MTI %s (IPM clearing has 1240, 1442, 1644 and 1740)", m.mti)
}

// admin maps 1644 messages: headers, trailers and notices post nothing;
// settlement positions are the scheme's statement when reading one.
func (mp *mapper) admin(m *message, de24 string) (formats.Record, *mapError) {
	rec := formats.Record{Kind: formats.Skip, Detail: "administrative 1644/" + de24}
	switch de24 {
	case funcHeader:
		rec.Detail = "file header 1644/697"
	case funcTrailer:
		rec.Detail = "file trailer 1644/695"
	case "685":
		rec.Detail = "financial position detail 1644/685"
		if mp.statement {
			return mp.position(m, rec)
		}
	case "688":
		rec.Detail = "settlement position detail 1644/688"
		if mp.statement {
			return mp.settlement(m, rec)
		}
	}
	return rec, nil
}

// common fills what every financial message needs: amount, currency,
// direction, value date and the card.
func (mp *mapper) common(m *message, rec *formats.Record, dirs map[string]formats.Direction) *mapError {
	de3, ok := m.get(3)
	if !ok || len(de3) != 6 || !allDigits(de3) {
		return mapErr("DE3", "the processing code is missing or not six digits")
	}
	dir, ok := dirs[de3[:2]]
	if !ok {
		return mapErr("DE3", "unknown processing code %s", de3[:2])
	}
	rec.Direction = dir
	if me := mp.amount(m, 4, 49, rec); me != nil {
		return me
	}
	if me := mp.reconciliationAmount(m, rec); me != nil {
		return me
	}
	d, me := valueDate(m)
	if me != nil {
		return me
	}
	rec.ValueDate = d
	if pan, ok := m.get(2); ok && pan != "" {
		if !allDigits(pan) {
			return mapErr("DE2", "the PAN is not digits")
		}
		rec.Account = mp.hasher.Account(panScope, pan)
	}
	return nil
}

// amount reads the amount element amt in the currency element cur, with the
// exponent PDS0148 gives for that currency, which must be ISO 4217's.
func (mp *mapper) amount(m *message, amt, cur int, rec *formats.Record) *mapError {
	v, ok := m.get(amt)
	if !ok || len(v) != 12 || !allDigits(v) {
		return mapErr(deName(amt), "the amount is missing or not 12 digits")
	}
	c, me := currency(m, cur)
	if me != nil {
		return me
	}
	minor, err := money.ParseMinor(v)
	if err != nil {
		return mapErr(deName(amt), "%v", err)
	}
	if err := formats.CheckAmount(minor); err != nil {
		return mapErr(deName(amt), "%v", err)
	}
	rec.Amount, rec.Currency = minor, c.Code
	return nil
}

// reconciliationAmount reads the reconciliation amount (DE5 in DE50), what the scheme
// settles the record in, when it is in another currency than DE4's: the
// scheme's positions net in it. It is optional, as it is in the files.
func (mp *mapper) reconciliationAmount(m *message, rec *formats.Record) *mapError {
	if _, ok := m.get(5); !ok {
		return nil
	}
	var r formats.Record
	if me := mp.amount(m, 5, 50, &r); me != nil {
		return me
	}
	if r.Currency != rec.Currency {
		rec.SettleAmount, rec.SettleCurrency = r.Amount, r.Currency
	}
	return nil
}

// currency reads a numeric currency element and checks PDS0148's exponent
// for it: an exponent that disagrees with ISO 4217 would scale the amount
// by a power of ten, so it is refused, not trusted.
func currency(m *message, cur int) (money.Currency, *mapError) {
	code, ok := m.get(cur)
	if !ok || len(code) != 3 || !allDigits(code) {
		return money.Currency{}, mapErr(deName(cur), "the currency code is missing or not three digits")
	}
	c, err := money.LookupCurrency(code)
	if err != nil {
		return c, mapErr(deName(cur), "unknown currency %s", code)
	}
	exps, ok := m.pds.get("0148")
	if !ok {
		return c, nil
	}
	if len(exps)%4 != 0 || !allDigits(exps) {
		return c, mapErr("PDS0148", "the currency exponents are not groups of four digits")
	}
	for i := 0; i < len(exps); i += 4 {
		if exps[i:i+3] == code && int(exps[i+3]-'0') != c.Exponent {
			return c, mapErr("PDS0148", "the exponent of currency %s is %c, ISO 4217 says %d", code, exps[i+3], c.Exponent)
		}
	}
	return c, nil
}

// valueDate is the business date of the clearing cycle (PDS0158, positions
// 13-18), else the local transaction date (DE12). Both stay the same when a
// file is re-sent.
func valueDate(m *message) (time.Time, *mapError) {
	if v, ok := m.pds.get("0158"); ok && len([]rune(v)) >= 18 {
		d, err := yymmdd(string([]rune(v)[12:18]))
		if err != nil {
			return d, mapErr("PDS0158", "the business date is %v", err)
		}
		return d, nil
	}
	v, ok := m.get(12)
	if !ok || len(v) < 6 {
		return time.Time{}, mapErr("DE12", "no date: neither PDS0158 nor DE12 is present")
	}
	d, err := yymmdd(v[:6])
	if err != nil {
		return d, mapErr("DE12", "the local transaction date is %v", err)
	}
	return d, nil
}

// yymmdd parses a date of the 2000s.
func yymmdd(s string) (time.Time, error) {
	if len(s) != 6 || !allDigits(s) {
		return time.Time{}, fmt.Errorf("not six digits")
	}
	t, err := time.Parse("060102", s)
	if err != nil {
		return time.Time{}, fmt.Errorf("not a date (%s)", s)
	}
	return formats.Date(2000+t.Year()%100, t.Month(), t.Day()), nil
}

// arn reads and checks DE31: 23 digits whose last is the Luhn check digit of
// the first 22. It is the key of the lifecycle, so a bad one rejects.
func arn(m *message) (string, *mapError) {
	v, ok := m.get(31)
	switch {
	case !ok:
		return "", mapErr("DE31", "the acquirer reference number is missing")
	case len(v) != 23 || !allDigits(v):
		return "", mapErr("DE31", "the acquirer reference number is not 23 digits")
	case luhnDigit(v[:22]) != v[22]:
		return "", mapErr("DE31", "the check digit of acquirer reference number %s is %c, mod 10 gives %c", v, v[22], luhnDigit(v[:22]))
	}
	return v, nil
}

// luhnDigit is the Luhn (mod 10) check digit of digits.
func luhnDigit(digits string) byte {
	sum := 0
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if (len(digits)-1-i)%2 == 0 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return byte('0' + (10-sum%10)%10)
}

// reversal reports whether PDS0025 marks the message as a reversal: "R"
// and the original's central-site processing date.
func reversal(m *message) (bool, *mapError) {
	v, ok := m.pds.get("0025")
	if !ok {
		return false, nil
	}
	if len(v) < 1 || v[0] != 'R' {
		return false, mapErr("PDS0025", "the message reversal indicator is not R")
	}
	return true, nil
}

// financial maps presentments, chargebacks and second presentments.
func (mp *mapper) financial(m *message, fn string, st stage) (formats.Record, *mapError) {
	ref, me := arn(m)
	if me != nil {
		return formats.Record{}, me
	}
	rev, me := reversal(m)
	if me != nil {
		return formats.Record{}, me
	}
	own := keyPrefix + ref + ":" + strings.Replace(fn, "/", ":", 1)
	rec := formats.Record{Key: own, Reference: ref, Detail: st.name + " " + fn}
	if me := mp.common(m, &rec, processing); me != nil {
		return formats.Record{}, me
	}
	origin := keyPrefix + ref + ":1240:200"
	switch {
	case rec.Amount == 0:
		rec.Kind = formats.Notice
		rec.Detail += " (zero amount)"
	case rev:
		rec.Kind, rec.Key = formats.Reversal, own+reversalSuffix
		rec.Detail = "reversal of " + rec.Detail
		rec.Link = &formats.Link{Reference: ref, KeyPrefix: origin, Suffix: st.suffix + reversalSuffix}
	case st.suffix == "":
		rec.Kind, rec.Key = formats.Clearing, origin
	default:
		rec.Kind = formats.Return
		rec.Link = &formats.Link{Reference: ref, KeyPrefix: origin, Suffix: st.suffix}
	}
	return rec, nil
}

// fee maps 1740 fee collections, keyed by their originator (DE94) and
// control number (PDS0137). DE3 19 credits the originator and 29 debits
// it; the record is seen from the receiving member (DE93), as the scheme's
// positions are, so 19 is a debit and 29 a credit.
func (mp *mapper) fee(m *message, fn, name string) (formats.Record, *mapError) {
	orig, ok := m.get(94)
	if !ok || orig == "" || !allDigits(orig) {
		return formats.Record{}, mapErr("DE94", "the originator of the fee collection is missing or not digits")
	}
	ctl, ok := m.pds.get("0137")
	if !ok || strings.TrimSpace(ctl) == "" {
		return formats.Record{}, mapErr("PDS0137", "the fee collection control number is missing")
	}
	rev, me := reversal(m)
	if me != nil {
		return formats.Record{}, me
	}
	de24, _ := m.get(24)
	key := keyPrefix + orig + ":1740:" + de24 + ":" + ctl
	rec := formats.Record{Key: key, Reference: ctl, Detail: name + " " + fn}
	if me := mp.common(m, &rec, feeProcessing); me != nil {
		return formats.Record{}, me
	}
	// A fee moves money between members, not from the card DE2 may name
	// (a recovered card award, say): the record has no counterparty
	// account, and as a fee the ledger books it against the source's fee
	// account (fees:<source>).
	rec.Account, rec.LineType = pii.Account{}, formats.Fee
	switch {
	case rec.Amount == 0:
		rec.Kind = formats.Notice
		rec.Detail += " (zero amount)"
	case rev:
		rec.Kind, rec.Key = formats.Reversal, key+reversalSuffix
		rec.Detail = "reversal of " + rec.Detail
		rec.Link = &formats.Link{Reference: ctl, KeyPrefix: key, Suffix: reversalSuffix}
	default:
		rec.Kind = formats.Clearing
	}
	return rec, nil
}
