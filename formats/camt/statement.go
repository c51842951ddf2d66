package camt

import (
	"encoding/xml"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/money"
	"github.com/clearing-dev/clearing/internal/pii"
)

// stmtState is the open Stmt, Rpt or Ntfctn.
type stmtState struct {
	line, off int64
	id        string
	created   string // CreDtTm
	toDate    string // FrToDt/ToDtTm
	account   pii.Account
	token     string // first 16 hex digits of the account id, for keys
	hasAcct   bool
	balances  []Balance
	totals    []Total
	skipped   int64
	broken    bool // an error inside: balances are not checked
	// Key sequence: the last entry reference and how often it repeated on
	// adjacent entries, and how many entries had none.
	lastRef string
	refRun  int
	blank   int
}

func (r *Reader) statementChild(t xml.StartElement, line, off int64) {
	st := r.st
	switch t.Name.Local {
	case "Id":
		var s string
		if r.decode(&s, &t, line, off) {
			st.id = strings.TrimSpace(s)
		}
	case "CreDtTm":
		var s string
		if r.decode(&s, &t, line, off) {
			st.created = s
			r.checkDate(s, "CreDtTm", line, off)
		}
	case "FrToDt":
		var p struct {
			FrDtTm string `xml:"FrDtTm"`
			ToDtTm string `xml:"ToDtTm"`
		}
		if r.decode(&p, &t, line, off) {
			st.toDate = p.ToDtTm
			r.checkDate(p.FrDtTm, "FrToDt/FrDtTm", line, off)
			r.checkDate(p.ToDtTm, "FrToDt/ToDtTm", line, off)
		}
	case "Acct":
		var a xAcct
		if r.decode(&a, &t, line, off) {
			r.account(&a, line, off)
		}
	case "Bal":
		var b xBal
		if r.decode(&b, &t, line, off) {
			r.balance(&b, line, off)
		}
	case "Ntry":
		var e xEntry
		if r.decode(&e, &t, line, off) {
			r.entry(&e, line, off)
		}
	default:
		r.skip(line, off)
	}
}

// account hashes the statement's account: an IBAN in the scope "iban", so
// that the same account hashes alike in every format that names it by
// IBAN, and any other identifier in the scope of its issuer or servicer.
func (r *Reader) account(a *xAcct, line, off int64) {
	st := r.st
	if iban := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(a.Id.IBAN), " ", "")); iban != "" {
		st.account = r.opts.Hasher.Account("iban", iban)
	} else if id := strings.TrimSpace(a.Id.Othr.Id); id != "" {
		scope := strings.TrimSpace(a.Id.Othr.Issr)
		if scope == "" {
			scope = strings.TrimSpace(a.Svcr.FinInstnId.BIC + a.Svcr.FinInstnId.BICFI)
		}
		st.account = r.opts.Hasher.Account("camt:"+scope, id)
	} else {
		r.fail(&formats.ParseError{Line: line, Offset: off, Field: "Acct/Id", Err: fmt.Errorf("%w: account without an IBAN or other identification", ErrMissingField)})
		return
	}
	st.token = st.account.ID[len("cust:") : len("cust:")+16]
	st.hasAcct = true
}

func (r *Reader) balance(b *xBal, line, off int64) {
	pe := func(field string, err error) {
		r.fail(&formats.ParseError{Line: line, Offset: off, Field: field, Err: err})
	}
	code := strings.TrimSpace(b.Tp.CdOrPrtry.Cd)
	if code == "" {
		code = strings.TrimSpace(b.Tp.CdOrPrtry.Prtry)
	}
	v, c, err := amount(b.Amt)
	if err != nil {
		pe("Bal/Amt", err)
		return
	}
	switch strings.TrimSpace(b.CdtDbtInd) {
	case "CRDT":
	case "DBIT":
		v = -v
	case "":
		r.warn(line, off, WarnBalanceIndicator, "balance %s has no CdtDbtInd; read as a credit balance", code)
	default:
		pe("Bal/CdtDbtInd", fmt.Errorf("%w: credit/debit indicator %q", ErrField, b.CdtDbtInd))
		return
	}
	d, err := date(b.Dt)
	if err != nil {
		pe("Bal/Dt", err)
		return
	}
	r.st.balances = append(r.st.balances, Balance{Code: code, Currency: c.Code, Amount: v, Date: d})
}

// total returns the statement's running total of a currency.
func (st *stmtState) total(code string) *Total {
	for i := range st.totals {
		if st.totals[i].Currency == code {
			return &st.totals[i]
		}
	}
	st.totals = append(st.totals, Total{Currency: code})
	return &st.totals[len(st.totals)-1]
}

// maxTotal bounds a statement's credits and its debits per currency, so
// that opening plus credits minus debits cannot overflow.
const maxTotal = math.MaxInt64 / 4

// book adds a booked entry to its currency's total; false on overflow.
func (st *stmtState) book(code string, v int64, dir formats.Direction) bool {
	t := st.total(code)
	t.Entries++
	if dir == formats.Credit {
		if t.Credits > maxTotal-v {
			return false
		}
		t.Credits += v
	} else {
		if t.Debits > maxTotal-v {
			return false
		}
		t.Debits += v
	}
	return true
}

// checkDate refuses an impossible date in a statement's own dates: they
// date entries that carry none, and a date that cannot exist means a file
// that cannot be trusted.
func (r *Reader) checkDate(s, field string, line, off int64) {
	if _, err := date(xDate{DtTm: s}); err != nil {
		r.fail(&formats.ParseError{Line: line, Offset: off, Field: field, Err: err})
	}
}

// fallbackDate dates an entry that has neither value nor booking date:
// the statement's closing balance date, else the end of its period, else
// its creation date. It names the source for the warning.
func (st *stmtState) fallbackDate(cur string) (time.Time, string) {
	if b, ok := st.find("CLBD", cur); ok && !b.Date.IsZero() {
		return b.Date, "the closing balance's date"
	}
	if d, err := date(xDate{DtTm: st.toDate}); err == nil && !d.IsZero() {
		return d, "the end of the statement's period"
	}
	if d, err := date(xDate{DtTm: st.created}); err == nil && !d.IsZero() {
		return d, "the statement's creation date"
	}
	return time.Time{}, ""
}

// find returns the first balance of a code and currency.
func (st *stmtState) find(code, cur string) (Balance, bool) {
	for _, b := range st.balances {
		if b.Code == code && b.Currency == cur {
			return b, true
		}
	}
	return Balance{}, false
}

// closeStatement checks the balances of each currency: the opening booked
// balance (OPBD, else PRCD) plus the booked entries equals the closing
// booked balance (CLBD). A difference is a warning: a bank's balances are
// account state, and an excerpt or a late entry breaks the sum without
// making any line wrong. A camt.053 statement without any closing balance
// is refused: it is not a statement.
func (r *Reader) closeStatement() {
	st := r.st
	defer func() { r.st = nil }()
	if !st.hasAcct && !st.broken {
		r.fail(&formats.ParseError{Line: st.line, Offset: st.off, Field: "Acct", Err: fmt.Errorf("%w: %s without an account (Acct)", ErrStructure, r.msg.statement)})
	}
	if st.broken {
		return
	}
	hasClose := false
	for _, b := range st.balances {
		if b.Code == "CLBD" {
			hasClose = true
		}
		st.total(b.Currency)
	}
	if r.msg.kind == "053" && !hasClose {
		r.fail(&formats.ParseError{Line: st.line, Offset: st.off, Field: "Bal", Err: fmt.Errorf("%w: statement without a closing booked balance (CLBD)", ErrStructure)})
		return
	}
	for i := range st.totals {
		t := &st.totals[i]
		open, okOpen := st.find("OPBD", t.Currency)
		if !okOpen {
			open, okOpen = st.find("PRCD", t.Currency)
		}
		closing, okClose := st.find("CLBD", t.Currency)
		if !okOpen || !okClose {
			if r.msg.kind != "054" || len(st.balances) > 0 {
				r.warn(st.line, st.off, WarnUnchecked, "statement in %s has no opening or no closing booked balance; its entries are not checked against them", t.Currency)
			}
			continue
		}
		t.Checked = true
		net := open.Amount + t.Credits - t.Debits // each term is below 2^61
		t.Balanced = net == closing.Amount
		if !t.Balanced {
			c := money.MustCurrency(t.Currency)
			r.warn(st.line, st.off, WarnUnbalanced, "statement in %s: opening %s plus booked entries is %s, the closing balance is %s (difference %s)",
				t.Currency, money.Format(open.Amount, c), money.Format(net, c), money.Format(closing.Amount, c), money.Format(closing.Amount-net, c))
		}
	}
	if r.opts.OnStatement != nil {
		r.opts.OnStatement(Statement{Line: st.line, Message: r.msg.name, ID: st.id, Account: st.account,
			Balances: st.balances, Totals: st.totals, Skipped: st.skipped})
	}
}
