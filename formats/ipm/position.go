package ipm

import (
	"strings"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/money"
)

// signed reads a position amount, "D" or "C" and 16 digits, seen from the
// member: D means the member pays.
func signed(m *message, tag string) (int64, formats.Direction, *mapError) {
	v, ok := m.pds.get(tag)
	if !ok || len(v) != 17 || (v[0] != 'D' && v[0] != 'C') || !allDigits(v[1:]) {
		return 0, "", mapErr("PDS"+tag, "the amount is missing or not D/C and 16 digits")
	}
	n, err := money.ParseMinor(v[1:])
	if err != nil {
		return 0, "", mapErr("PDS"+tag, "%v", err)
	}
	if err := formats.CheckAmount(n); err != nil {
		return 0, "", mapErr("PDS"+tag, "%v", err)
	}
	return n, formats.Direction(v[:1]), nil
}

// position maps a financial position detail (1644/685): the net of one
// reconciled file, transaction function, processing code, original or
// reversal and currency pair, in the reconciliation currency (PDS0394 in
// DE50). It is the breakdown of the settlement positions, so it stays a
// Skip: a statement of both would count every amount twice.
func (mp *mapper) position(m *message, rec formats.Record) (formats.Record, *mapError) {
	amt, dir, me := signed(m, "0394")
	if me != nil {
		return rec, me
	}
	c, me := currency(m, 50)
	if me != nil {
		return rec, me
	}
	parts := []string{"position"}
	for _, t := range []string{"0300", "0372", "0374", "0378"} {
		v, _ := m.pds.get(t)
		parts = append(parts, strings.TrimSpace(v))
	}
	de49, _ := m.get(49)
	rec.Key = keyPrefix + strings.Join(append(parts, de49, c.Numeric), ":")
	rec.Amount, rec.Currency, rec.Direction, rec.LineType = amt, c.Code, dir, formats.SettlementTotal
	return rec, nil
}

// settlement maps a settlement position detail (1644/688): what the
// member settles for one business day and reconciliation currency, the
// net total PDS0396 in DE50. It is a statement line that settles the
// group of ledger items of that business day and currency, so its value
// date is the business day (the items' value date) and its Reference the
// day in ISO form. PDS0359 gives the settlement service, the
// reconciliation date and cycle and the settlement date and cycle.
func (mp *mapper) settlement(m *message, rec formats.Record) (formats.Record, *mapError) {
	amt, dir, me := signed(m, "0396")
	if me != nil {
		return rec, me
	}
	c, me := currency(m, 50)
	if me != nil {
		return rec, me
	}
	sd, ok := m.pds.get("0359")
	rs := []rune(sd)
	if !ok || len(rs) < 67 {
		return rec, mapErr("PDS0359", "the settlement data are missing or shorter than 67 characters")
	}
	day, err := yymmdd(string(rs[51:57]))
	if err != nil {
		return rec, mapErr("PDS0359", "the reconciliation date is %v", err)
	}
	if _, err := yymmdd(string(rs[59:65])); err != nil {
		return rec, mapErr("PDS0359", "the settlement date is %v", err)
	}
	member, _ := m.get(93)
	rec.Key = keyPrefix + strings.Join([]string{"settlement", member, strings.TrimSpace(string(rs[40:50])),
		string(rs[51:57]), string(rs[57:59]), c.Numeric}, ":")
	rec.Kind, rec.Reference = formats.Clearing, day.Format("2006-01-02")
	rec.Amount, rec.Currency, rec.Direction, rec.ValueDate = amt, c.Code, dir, day
	rec.LineType = formats.SettlementTotal
	return rec, nil
}
