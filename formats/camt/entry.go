package camt

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/formats/internal/statement"
	"github.com/clearing-dev/clearing/internal/money"
)

// entryCtx is what every line of one entry shares.
type entryCtx struct {
	line, off int64
	key       string // the entry's key; detail and fee lines extend it
	bankRef   string
	cur       money.Currency
	dir       formats.Direction
	amount    int64
	value     time.Time
	reversal  bool
	code      string
}

// entry turns one booked Ntry into its statement lines (docs/formats/camt.md):
//   - an entry with two or more transaction details whose amounts add up to
//     it: a settlement_total line for the entry and one line per detail;
//   - any other entry: one line, less the charges provably included in its
//     amount, which become one fee line.
//
// Either way the lines other than settlement totals add up to the entry, so
// nothing is counted twice.
func (r *Reader) entry(e *xEntry, line, off int64) {
	st := r.st
	pe := func(field string, err error) {
		r.fail(&formats.ParseError{Line: line, Offset: off, Field: field, Err: err})
	}
	if !st.hasAcct {
		pe("Acct", fmt.Errorf("%w: entry before the statement's account (Acct)", ErrStructure))
		return
	}
	booked, err := r.status(e, line, off)
	if err != nil {
		pe("Ntry/Sts", err)
		return
	}
	if !booked {
		st.skipped++
		r.skipped++
		return
	}
	details, btch := flatten(e)
	if len(details) > r.opts.MaxDetails {
		pe("Ntry/NtryDtls", fmt.Errorf("%w: more than %d transaction details in one entry", formats.ErrTooLarge, r.opts.MaxDetails))
		return
	}
	ec := entryCtx{line: line, off: off}
	if field, err := r.entryMoney(e, &ec); err != nil {
		pe(field, err)
		return
	}
	if len(details) >= 2 {
		if lines := r.batch(&ec, e, details, btch.PmtInfId); lines != nil {
			for _, rec := range lines {
				if !r.emit(rec) {
					return
				}
			}
			return
		}
		r.warn(line, off, WarnBatchIncomplete, "entry with %d transaction details that do not add up to it; read as one line", len(details))
	}
	var tx *xTx
	if len(details) == 1 {
		tx = details[0]
	}
	fees, err := includedCharges(e, tx, &ec)
	if err != nil {
		pe("Chrgs", err)
		return
	}
	main := r.line(&ec, ec.key, ec.amount-fees, ec.dir, tx, &e.BkTxCd, btch.PmtInfId)
	if n := strings.TrimSpace(btch.NbOfTxs); n != "" && n != "1" {
		main.Detail += " batch of " + digits(n)
	}
	if !r.emit(main) || fees == 0 {
		return
	}
	fee := main
	fee.Key, fee.Amount, fee.LineType = ec.key+":fee", fees, formats.Fee
	fee.Kind = formats.Clearing
	fee.Detail = r.msg.name[:8] + " charges"
	r.emit(fee)
}

// flatten returns an entry's transaction details across its NtryDtls, and
// the first batch description.
func flatten(e *xEntry) ([]*xTx, xBatch) {
	var details []*xTx
	var btch xBatch
	found := false
	for i := range e.NtryDtls {
		nd := &e.NtryDtls[i]
		if !found && (nd.Btch.NbOfTxs != "" || nd.Btch.PmtInfId != "" || nd.Btch.MsgId != "") {
			btch, found = nd.Btch, true
		}
		for j := range nd.TxDtls {
			details = append(details, &nd.TxDtls[j])
		}
	}
	return details, btch
}

// entryMoney reads what every line of a booked entry shares: amount,
// currency, direction, value date, reversal mark, code and key, and adds
// the entry to its statement's totals. It names the element at fault.
func (r *Reader) entryMoney(e *xEntry, ec *entryCtx) (string, error) {
	st := r.st
	var err error
	if ec.amount, ec.cur, err = amount(e.Amt); err != nil {
		return "Ntry/Amt", err
	}
	var ok bool
	if ec.dir, ok = direction(e.CdtDbtInd); !ok {
		return "Ntry/CdtDbtInd", fmt.Errorf("%w: credit/debit indicator %q, want CRDT or DBIT", ErrField, e.CdtDbtInd)
	}
	booking, err := date(e.BookgDt)
	if err != nil {
		return "Ntry/BookgDt", err
	}
	if ec.value, err = date(e.ValDt); err != nil {
		return "Ntry/ValDt", err
	}
	if ec.value.IsZero() {
		ec.value = booking
	}
	if ec.value.IsZero() {
		// Some banks leave both dates out of statement entries; the
		// statement then dates them.
		if d, from := st.fallbackDate(ec.cur.Code); !d.IsZero() {
			ec.value = d
			r.warn(ec.line, ec.off, WarnDateAssumed, "entry without a value or booking date; dated %s, %s", d.Format(time.DateOnly), from)
		}
	}
	if ec.value.IsZero() {
		return "Ntry/ValDt", fmt.Errorf("%w: entry without a value date or booking date", ErrMissingField)
	}
	ec.reversal = isTrue(e.RvslInd)
	ec.code = codeText(&e.BkTxCd)
	ec.bankRef = bankRef(e)
	ec.key = "camt:" + st.token + ":" + r.keySeq(ec.bankRef)
	if !st.book(ec.cur.Code, ec.amount, ec.dir) {
		return "Ntry/Amt", fmt.Errorf("%w: the statement's entries sum past the limit", ErrAmount)
	}
	return "", nil
}

// status reads Sts: BOOK is booked; PDNG, INFO and FUTR are not statement
// lines. A missing status is read as booked with a warning, as some banks
// send camt.053 entries without one; any other value is refused.
func (r *Reader) status(e *xEntry, line, off int64) (bool, error) {
	if e.Sts == nil {
		r.warn(line, off, WarnStatusMissing, "entry without a status (Sts); read as booked")
		return true, nil
	}
	s := strings.TrimSpace(e.Sts.Cd)
	if s == "" {
		s = strings.TrimSpace(e.Sts.Text)
	}
	if s == "" {
		s = strings.TrimSpace(e.Sts.Prtry)
	}
	switch s {
	case "BOOK":
		return true, nil
	case "PDNG", "INFO", "FUTR":
		return false, nil
	case "":
		r.warn(line, off, WarnStatusMissing, "entry with an empty status (Sts); read as booked")
		return true, nil
	}
	return false, fmt.Errorf("%w: entry status %q, want BOOK, PDNG, INFO or FUTR", ErrField, s)
}

// keySeq is the entry's key segment: its bank reference, "~2", "~3" for a
// reference repeated on adjacent entries, or, without one, a token of the
// statement id and the entry's position among the statement's entries
// without a reference ("s3f9a0c1b2d4e:#3"). The id is hashed because banks
// build it from the account number (genkgo's sample:
// "253EURNL26VAYB8060476890"), and a key is stored in clear.
func (r *Reader) keySeq(ref string) string {
	st := r.st
	if ref == "" {
		st.blank++
		st.lastRef, st.refRun = "", 0
		tok := r.opts.Hasher.Account("camt-statement", st.id).ID
		return "s" + tok[len("cust:"):len("cust:")+12] + ":#" + strconv.Itoa(st.blank)
	}
	if st.refRun > 0 && ref == st.lastRef {
		st.refRun++
		return statement.KeySegment(ref) + "~" + strconv.Itoa(st.refRun)
	}
	st.lastRef, st.refRun = ref, 1
	return statement.KeySegment(ref)
}

// batch returns the lines of an entry with several details when every
// detail has a readable amount in the entry's currency and a direction, and
// they add up to the entry; nil otherwise.
func (r *Reader) batch(ec *entryCtx, e *xEntry, details []*xTx, pmtInf string) []formats.Record {
	type part struct {
		amount int64
		dir    formats.Direction
	}
	parts := make([]part, len(details))
	var net int64
	for i, tx := range details {
		a := tx.Amt
		if strings.TrimSpace(a.Value) == "" {
			a = tx.AmtDtls.TxAmt.Amt
		}
		if strings.TrimSpace(a.Value) == "" {
			return nil
		}
		// A detail amount that cannot be read, or is in another currency,
		// leaves the entry one line: the entry's own amount is the money.
		v, c, err := amount(a)
		if err != nil || c.Code != ec.cur.Code {
			return nil
		}
		d := ec.dir
		if s := strings.TrimSpace(tx.CdtDbtInd); s != "" {
			var ok bool
			if d, ok = direction(s); !ok {
				return nil
			}
		}
		parts[i] = part{v, d}
		if d == formats.Credit {
			net += v
		} else {
			net -= v
		}
	}
	want := ec.amount
	if ec.dir == formats.Debit {
		want = -want
	}
	if net != want {
		return nil
	}
	total := r.line(ec, ec.key, ec.amount, ec.dir, nil, &e.BkTxCd, "")
	total.LineType = formats.SettlementTotal
	total.Reference, total.AltReference = two(matchRefs(nil, pmtInf), ec.bankRef)
	total.Detail += " batch of " + strconv.Itoa(len(details))
	out := []formats.Record{total}
	for i, tx := range details {
		code := &tx.BkTxCd
		if codeText(code) == "" {
			code = &e.BkTxCd
		}
		rec := r.line(ec, ec.key+":"+strconv.Itoa(i+1), parts[i].amount, parts[i].dir, tx, code, pmtInf)
		out = append(out, rec)
	}
	return out
}

// line builds one statement line.
func (r *Reader) line(ec *entryCtx, key string, v int64, dir formats.Direction, tx *xTx, code *xBkTxCd, pmtInf string) formats.Record {
	returned := ec.reversal || (tx != nil && tx.RtrInf != nil)
	rec := formats.Record{
		Key:       key,
		Kind:      formats.Clearing,
		Amount:    v,
		Currency:  ec.cur.Code,
		Direction: dir,
		Account:   r.st.account,
		ValueDate: ec.value,
		LineType:  lineType(code, returned, r.opts.BankTxCodes),
		Line:      ec.line,
		Offset:    ec.off,
	}
	if tx == nil && codeText(code) == "" {
		code = &xBkTxCd{}
	}
	rec.Detail = r.msg.name[:8]
	if c := codeText(code); c != "" {
		rec.Detail += " " + c
	}
	if ec.reversal {
		rec.Detail += " reversal"
	} else if returned {
		rec.Detail += " return"
	}
	rec.Reference, rec.AltReference = two(matchRefs(tx, pmtInf), ec.bankRef)
	if v == 0 {
		rec.Kind = formats.Notice
	}
	return rec
}

// includedCharges returns the charges of an entry that are part of its
// amount and so become a fee line: those marked ChrgInclInd true, and
// those without the indicator when the detail's gross amount plus them
// equals the entry (a 53.00 debit for a 50.00 return and 3.00 of charges).
// Only charges in the entry's currency and direction count: a charge the
// other way was not taken out of this entry. Charges that are not provably
// inside the amount are information and make no line.
func includedCharges(e *xEntry, tx *xTx, ec *entryCtx) (int64, error) {
	var all []xCharges
	all = append(all, e.Chrgs...)
	if tx != nil {
		all = append(all, tx.Chrgs...)
	}
	var explicit, implicit int64
	for i := range all {
		records := append([]xCharge{all[i].xCharge}, all[i].Rcrd...)
		for _, c := range records {
			if strings.TrimSpace(c.Amt.Value) == "" {
				continue
			}
			v, cur, err := amount(c.Amt)
			if err != nil {
				if isTrue(c.ChrgInclInd) {
					return 0, err // money said to be inside the entry
				}
				continue // information that cannot be read changes nothing
			}
			d := formats.Debit
			if s := strings.TrimSpace(c.CdtDbtInd); s != "" {
				d, _ = direction(s)
			}
			if v == 0 || cur.Code != ec.cur.Code || d != ec.dir {
				continue
			}
			switch strings.TrimSpace(c.ChrgInclInd) {
			case "true", "1":
				explicit += v
			case "false", "0":
			default:
				implicit += v
			}
			if explicit+implicit >= ec.amount {
				return 0, nil
			}
		}
	}
	fees := explicit
	if implicit > 0 && tx != nil {
		for _, g := range []xAmt{tx.AmtDtls.InstdAmt.Amt, tx.AmtDtls.TxAmt.Amt, tx.Amt} {
			if strings.TrimSpace(g.Value) == "" {
				continue
			}
			gv, gc, err := amount(g)
			if err == nil && gc.Code == ec.cur.Code && gv+explicit+implicit == ec.amount {
				fees += implicit
				break
			}
		}
	}
	return fees, nil
}

func isTrue(s string) bool {
	s = strings.TrimSpace(s)
	return s == "true" || s == "1"
}

// digits returns s when it is a short number, for a Detail, and "?"
// otherwise.
func digits(s string) string {
	s = strings.TrimSpace(s)
	if len(s) == 0 || len(s) > 15 {
		return "?"
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return "?"
		}
	}
	return s
}
