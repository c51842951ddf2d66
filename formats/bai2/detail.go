package bai2

import (
	"fmt"
	"strconv"

	"github.com/clearing-dev/clearing/formats"
)

// detail reads a 16 record: type code, amount, funds type with the fields it
// adds, bank reference, customer reference and free text. The text may name
// people, so it is validated by nothing and copied nowhere.
func (r *Reader) detail(lr *logical) (formats.Record, bool) {
	var rec formats.Record
	if r.st != inAccount {
		r.count(lr)
		r.fail(lr.errAt(0, "record_code", fmt.Errorf("%w: transaction detail (16) outside an account", ErrStructure)))
		return rec, false
	}
	r.count(lr)
	c := cursor{b: lr.content}
	code, err := parseTypeCode(c.next())
	if err != nil {
		r.fail(lr.errAt(c.at, "type_code", err))
		return rec, false
	}
	info := r.detailInfo(code)
	if info.err != nil {
		r.fail(lr.errAt(c.at, "type_code", info.err))
		return rec, false
	}
	var amount int64
	if af := c.next(); len(af) > 0 || info.tc.Direction != "" {
		if amount, err = parseAmount(af, false); err != nil {
			r.fail(lr.errAt(c.at, "amount", err))
			return rec, false
		}
		if err := formats.CheckAmount(amount); err != nil {
			r.fail(lr.errAt(c.at, "amount", err))
			return rec, false
		}
	}
	if !addAmount(&r.acct.total, amount) {
		r.fail(lr.errAt(c.at, "amount", fmt.Errorf("%w: account amounts overflow", ErrField)))
		return rec, false
	}
	funds, fe := parseFunds(&c, false, false)
	if fe != nil {
		r.fail(lr.errAt(fe.pos, fe.field, fe.err))
		return rec, false
	}
	bank := c.next()
	if err := checkID(bank, "bank reference"); err != nil {
		r.fail(lr.errAt(c.at, "bank_reference", err))
		return rec, false
	}
	cust := c.next()
	if err := checkText(cust, "customer reference"); err != nil {
		r.fail(lr.errAt(c.at, "customer_reference", err))
		return rec, false
	}
	if r.grp.rejected || r.acct.keyPrefix == "" {
		return rec, false
	}
	return r.record(lr, info, amount, funds, bank, cust), true
}

// record builds the Record of a detail whose fields all passed.
func (r *Reader) record(lr *logical, info detailInfo, amount int64, funds Funds, bank, cust []byte) formats.Record {
	seg := r.keySegment(bank)
	rec := formats.Record{
		Key:       r.acct.keyPrefix + seg,
		Kind:      formats.Clearing,
		Detail:    info.detail,
		Amount:    amount,
		Currency:  r.acct.currency.Code,
		Direction: info.tc.Direction,
		Account:   r.acct.sum.Account,
		ValueDate: r.grp.asOf,
		LineType:  info.tc.LineType,
		Line:      lr.parts[0].line,
		Offset:    lr.parts[0].offset,
	}
	if len(bank) > 0 {
		rec.Reference = r.acct.seq.lastRef // the same bytes, already a string
	}
	if len(cust) > 0 {
		rec.AltReference = string(cust)
	}
	if r.opts.Reference == CustomerReference {
		rec.Reference, rec.AltReference = rec.AltReference, rec.Reference
	}
	if funds.Type == "V" {
		rec.ValueDate = funds.ValueDate
	}
	switch {
	case info.tc.Direction == "":
		rec.Kind = formats.Skip
	case amount == 0:
		rec.Kind = formats.Notice
	}
	return rec
}

// keySegment is the last segment of a detail's key. It is the bank
// reference; a reference repeated on adjacent details of the account gets
// ":2", ":3" and so on, since some banks put a product word there rather
// than a reference. Without a bank reference it is "#n", the detail's
// position among the account's details that have none. Neither mark can
// occur in a reference, which may hold neither ':' nor a leading '#'.
func (r *Reader) keySegment(bank []byte) string {
	a := &r.acct.seq
	if len(bank) == 0 {
		a.blank++
		a.lastRef, a.refRun = "", 0
		return "#" + strconv.Itoa(a.blank)
	}
	if a.refRun > 0 && string(bank) == a.lastRef {
		a.refRun++
		return a.lastRef + ":" + strconv.Itoa(a.refRun)
	}
	a.lastRef, a.refRun = string(bank), 1
	return a.lastRef
}

// detailInfo resolves a type code once per reader.
func (r *Reader) detailInfo(code int) detailInfo {
	if d, ok := r.types[code]; ok {
		return d
	}
	tc, err := detailType(code, r.opts.TypeCodes)
	d := detailInfo{tc: tc, err: err, detail: fmt.Sprintf("%03d %s", code, tc.Name)}
	r.types[code] = d
	return d
}
