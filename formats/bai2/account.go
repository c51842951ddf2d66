package bai2

import (
	"bytes"
	"fmt"
	"time"

	"github.com/clearing-dev/clearing/internal/money"
)

// accountHeader reads an 03 record: the customer account number, its
// currency, and any number of status and summary entries, each a type code,
// an amount, an item count and a funds type with the fields it adds.
func (r *Reader) accountHeader(lr *logical) {
	switch r.st {
	case inAccount:
		r.fail(lr.errAt(0, "record_code", fmt.Errorf("%w: account identifier (03) before the account trailer (49) of the previous account", ErrStructure)))
		r.abandonAccount()
	case inFile:
		r.fail(lr.errAt(0, "record_code", fmt.Errorf("%w: account identifier (03) outside a group", ErrStructure)))
		r.file.broken = true
		r.grp = groupState{currency: "USD", rejected: true, broken: true}
	}
	r.st = inAccount
	r.grp.accounts++
	r.acct = accountState{sum: AccountSummary{
		Line: lr.parts[0].line, Originator: r.grp.originator, GroupStatus: r.grp.status,
		AsOfDate: r.grp.asOf, AsOfModifier: r.grp.modifier,
	}}
	r.count(lr)
	c := cursor{b: lr.content}
	number := c.next()
	if len(number) == 0 {
		r.fail(lr.errAt(c.at, "account_number", fmt.Errorf("%w: customer account number", ErrMissingField)))
		return
	}
	if err := checkText(number, "customer account number"); err != nil {
		r.fail(lr.errAt(c.at, "account_number", err))
		return
	}
	cur := c.next()
	code := r.grp.currency
	if len(cur) > 0 {
		code = string(cur)
	}
	mc, err := money.LookupCurrency(code)
	if err != nil {
		r.fail(lr.errAt(c.at, "currency", fmt.Errorf("%w: %w", ErrField, err)))
		return
	}
	r.acct.currency = mc
	r.acct.sum.Currency = mc.Code
	a := r.opts.Hasher.Account("bai2:"+r.grp.originator, string(number))
	r.acct.sum.Account = a
	r.acct.seq.account = a.ID
	if r.grp.prev.account == a.ID {
		r.acct.seq = r.grp.prev
	}
	r.acct.keyPrefix = "bai2:" + r.grp.originator + ":" + a.ID[len("cust:"):len("cust:")+16] + ":" +
		r.grp.asOf.Format(time.DateOnly) + ":"
	r.summaries(lr, &c)
}

// summaries reads the status and summary entries of an 03 record. An entry
// whose fields are all empty is a defaulted placeholder and is skipped.
func (r *Reader) summaries(lr *logical, c *cursor) {
	for !c.done {
		tf := c.next()
		typeAt := c.at
		af := c.next()
		amountAt := c.at
		cf := c.next()
		countAt := c.at
		funds, fe := parseFunds(c, true, true)
		if fe != nil {
			r.fail(lr.errAt(fe.pos, fe.field, fe.err))
			return
		}
		if len(tf) == 0 {
			if len(af) == 0 && len(cf) == 0 && len(bytes.Trim(c.b[min(c.pos, len(c.b)):], ", ")) == 0 {
				if funds.Type != "" {
					r.warn(lr.errAt(typeAt, "type_code", nil), WarnTrailingFields, "empty fields before the closing slash")
				}
				return
			}
			if len(af) > 0 || len(cf) > 0 || funds.Type != "" {
				r.fail(lr.errAt(typeAt, "type_code", fmt.Errorf("%w: summary type code", ErrMissingField)))
				return
			}
			continue
		}
		code, err := parseTypeCode(tf)
		if err != nil {
			r.fail(lr.errAt(typeAt, "type_code", err))
			return
		}
		s := Summary{TypeCode: code, Funds: funds}
		if len(af) > 0 {
			if s.Amount, err = parseAmount(af, true); err != nil {
				r.fail(lr.errAt(amountAt, "amount", err))
				return
			}
			s.HasAmount = true
		}
		if len(cf) > 0 {
			n, err := parseCount(cf, "item count")
			if err != nil || n > 1<<31 {
				r.fail(lr.errAt(countAt, "item_count", fmt.Errorf("%w: item count %q", ErrField, cf)))
				return
			}
			s.ItemCount = int(n)
		}
		if !addAmount(&r.acct.total, s.Amount) {
			r.fail(lr.errAt(amountAt, "amount", fmt.Errorf("%w: account amounts overflow", ErrField)))
			return
		}
		r.acct.sum.Summaries = append(r.acct.sum.Summaries, s)
	}
}

// accountTrailer reads a 49 record and checks it: its control total is the
// algebraic sum of every amount in the account's 03 entries and 16 details
// (funds availability amounts excluded), and its record count covers every
// physical record of the account, 03, 88 and 49 included.
func (r *Reader) accountTrailer(lr *logical) {
	if r.st != inAccount {
		r.count(lr)
		r.fail(lr.errAt(0, "record_code", fmt.Errorf("%w: account trailer (49) outside an account", ErrStructure)))
		return
	}
	r.count(lr)
	r.st = inGroup
	r.grp.prev = r.acct.seq
	c := cursor{b: lr.content}
	tf := c.next()
	var total int64
	var err error
	if len(tf) == 0 && r.acct.total == 0 && !r.acct.broken {
		// An account without activity: blank is the zero the bank left out.
		r.warn(lr.errAt(c.at, "control_total", nil), WarnBlankTotal, "account control total is blank, read as 0")
	} else if total, err = parseAmount(tf, true); err != nil {
		r.fail(lr.errAt(c.at, "control_total", err))
		r.grp.broken = true
		return
	}
	broken := r.acct.broken
	if !broken && total != r.acct.total {
		r.fail(lr.errAt(c.at, "control_total", fmt.Errorf("%w: account control total %s, the account's amounts sum to %s",
			ErrControlTotal, money.Format(total, r.acct.currency), money.Format(r.acct.total, r.acct.currency))))
		broken = true
		r.grp.broken = true
	}
	n, err := parseCount(c.next(), "number of records")
	switch {
	case err != nil:
		r.fail(lr.errAt(c.at, "record_count", err))
		broken = true
	case n != r.acct.records && !r.opts.Loosen.RecordCounts:
		r.fail(lr.errAt(c.at, "record_count", fmt.Errorf("%w: account trailer counts %d records, the account has %d",
			ErrRecordCount, n, r.acct.records)))
		broken = true
	}
	if !addAmount(&r.grp.total, total) {
		r.grp.broken = true
	}
	if !broken && !r.grp.rejected && r.opts.OnAccount != nil {
		r.acct.sum.ControlTotal, r.acct.sum.Records = total, n
		r.opts.OnAccount(r.acct.sum)
	}
}
