package mt940

import (
	"fmt"
	"math"
	"strings"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/money"
	"github.com/clearing-dev/clearing/internal/pii"
)

// msgState is the open message: from :20: (or its first field) to the next
// :20:, block header, "-}" or the end of the file.
type msgState struct {
	line, off int64
	typ       string // "940" or "942" from block 2; "" when not given
	is942     bool   // :34F: or :13D: seen
	ref       string
	hasRef    bool
	account   pii.Account
	token     string
	hasAcct   bool
	number    string
	hasNumber bool
	dt13      string
	cur       money.Currency
	hasCur    bool
	opening   *balance
	closing   *balance
	entries   int64
	credits   int64
	debits    int64
	sum90D    *total90
	sum90C    *total90
	stmtSeg   string
	broken    bool
	// The :61: waiting for its :86: fields.
	pending *formats.Record
	line61  line61
	info    strings.Builder
	// Key sequence: the last value date and bank reference, how often they
	// repeated on adjacent lines, and how many lines had no reference.
	lastRef string
	refRun  int
	blank   int
}

type total90 struct {
	n   int64
	sum int64
}

// maxTotal bounds a message's credits and its debits, so that opening plus
// credits minus debits cannot overflow.
const maxTotal = math.MaxInt64 / 4

func (r *Reader) field(ev *event) {
	if ev.tag != "86" {
		r.flushPending()
	}
	if ev.tag == "20" {
		r.endMessage(ev.line, ev.offset)
	}
	if r.msg == nil {
		r.messages++
		r.msg = &msgState{line: ev.line, off: ev.offset, typ: r.nextTyp}
		r.nextTyp = ""
		if ev.tag != "20" {
			r.warn(ev.line, ev.offset, WarnMissing, "message without a transaction reference (:20:)")
		}
	}
	m := r.msg
	v := strings.TrimSpace(ev.value())
	switch ev.tag {
	case "20":
		m.ref, m.hasRef = v, true
	case "25", "25P":
		if m.hasAcct {
			r.failAt(ev, ev.tag, fmt.Errorf("%w: a second account (:25:) in one message", ErrStructure))
			return
		}
		r.account(ev, v)
	case "28C", "28":
		m.number, m.hasNumber = strings.ReplaceAll(v, " ", ""), true
	case "60F", "60M":
		r.opening(ev, v)
	case "61":
		r.statementLine(ev)
	case "86":
		if m.pending != nil && m.info.Len() < maxFieldBytes {
			m.info.WriteString(ev.value())
		}
	case "62F", "62M":
		r.closing(ev, v)
	case "64", "65":
		if err := impossibleDate(v, 1); err != nil {
			r.failAt(ev, ev.tag, err)
			return
		}
		if _, _, err := parseBalance(v); err != nil {
			r.warn(ev.line, ev.offset, WarnBalance, ":%s: balance cannot be read and enters no check: %v", ev.tag, err)
		}
	case "34F":
		r.floorLimit(ev, v)
	case "13D", "13":
		if err := impossibleDate(v, 0); err != nil {
			r.failAt(ev, ev.tag, err)
			return
		}
		m.is942 = m.is942 || ev.tag == "13D"
		m.dt13 = v
	case "90D", "90C":
		r.total90(ev, v)
	case "21", "NS":
	default:
		r.warn(ev.line, ev.offset, WarnTag, "field :%s: is not used and was ignored", ev.tag)
	}
}

// opening reads :60F: or :60M:, which fixes the currency of the lines.
func (r *Reader) opening(ev *event, v string) {
	m := r.msg
	if m.opening != nil || m.entries > 0 {
		r.failAt(ev, ev.tag, fmt.Errorf("%w: opening balance after another opening balance or a statement line", ErrStructure))
		return
	}
	if b, ok := r.balance(ev, v); ok {
		m.opening, m.cur, m.hasCur = &b, b.cur, true
	}
}

// closing reads :62F: or :62M:, in the opening balance's currency.
func (r *Reader) closing(ev *event, v string) {
	m := r.msg
	if m.closing != nil {
		r.failAt(ev, ev.tag, fmt.Errorf("%w: a second closing balance in one message", ErrStructure))
		return
	}
	b, ok := r.balance(ev, v)
	if !ok {
		return
	}
	if m.hasCur && b.cur.Code != m.cur.Code {
		r.failAt(ev, ev.tag, fmt.Errorf("%w: closing balance in %s, opening balance in %s", ErrAmount, b.cur.Code, m.cur.Code))
		return
	}
	m.closing = &b
	if !m.hasCur {
		m.cur, m.hasCur = b.cur, true
	}
}

// floorLimit reads an MT942 :34F:, whose currency is the report's.
func (r *Reader) floorLimit(ev *event, v string) {
	m := r.msg
	m.is942 = true
	if len(v) < 3 || m.hasCur {
		return
	}
	c, err := currency(v[:3])
	if err != nil {
		r.failAt(ev, ev.tag, err)
		return
	}
	m.cur, m.hasCur = c, true
}

// account hashes the :25: account: an IBAN (with or without a currency
// appended, as ING writes it) in the scope "iban", shared with camt, and
// anything else ("BIC/number", a bank's own number) in the scope "mt940".
func (r *Reader) account(ev *event, v string) {
	m := r.msg
	if v == "" {
		r.failAt(ev, "25", fmt.Errorf("%w: empty account (:25:)", ErrStructure))
		return
	}
	norm := strings.ToUpper(strings.ReplaceAll(v, " ", ""))
	switch {
	case validIBAN(norm):
		m.account = r.opts.Hasher.Account("iban", norm)
	case len(norm) > 3 && looksLikeIBAN(norm[:len(norm)-3]) && knownCurrency(norm[len(norm)-3:]):
		m.account = r.opts.Hasher.Account("iban", norm[:len(norm)-3])
	case looksLikeIBAN(norm):
		m.account = r.opts.Hasher.Account("iban", norm)
	default:
		m.account = r.opts.Hasher.Account("mt940", v)
	}
	m.token = m.account.ID[len("cust:") : len("cust:")+16]
	m.hasAcct = true
}

func (r *Reader) balance(ev *event, v string) (balance, bool) {
	b, noComma, err := parseBalance(v)
	if err != nil {
		r.failAt(ev, ev.tag, err)
		return b, false
	}
	if noComma {
		r.warn(ev.line, ev.offset, WarnAmountComma, "balance amount without a decimal comma, read as whole %s", b.cur.Code)
	}
	return b, true
}

// total90 reads an MT942 :90D: or :90C:: a count, a currency and a sum.
func (r *Reader) total90(ev *event, v string) {
	n := 0
	for n < len(v) && n < 5 && isDigit(v[n]) {
		n++
	}
	if n == 0 || len(v) < n+4 {
		r.warn(ev.line, ev.offset, WarnBalance, ":%s: cannot be read and enters no check", ev.tag)
		return
	}
	c, err := currency(v[n : n+3])
	if err != nil {
		r.failAt(ev, ev.tag, err)
		return
	}
	sum, _, err := amount(v[n+3:], c)
	if err != nil {
		r.failAt(ev, ev.tag, err)
		return
	}
	var count int64
	for i := 0; i < n; i++ {
		count = count*10 + int64(v[i]-'0')
	}
	t := &total90{n: count, sum: sum}
	if ev.tag == "90D" {
		r.msg.sum90D = t
	} else {
		r.msg.sum90C = t
	}
}

// endMessage checks the open message: an account, and for MT940 an opening
// and a closing balance, which the lines must bridge. A difference is a
// warning (a bank's balances are account state, not a checksum of the
// file); a missing balance refuses the file.
func (r *Reader) endMessage(line, off int64) {
	r.flushPending()
	m := r.msg
	if m == nil {
		return
	}
	r.msg = nil
	at := func(err error) {
		r.fail(&formats.ParseError{Line: m.line, Offset: m.off, Err: err})
	}
	mt942 := m.is942 || m.typ == "942"
	if !m.hasAcct {
		at(fmt.Errorf("%w: message without an account (:25:)", ErrStructure))
		return
	}
	if !mt942 && m.opening == nil && !m.broken {
		at(fmt.Errorf("%w: message without an opening balance (:60F:)", ErrStructure))
		return
	}
	if !mt942 && m.closing == nil && !m.broken {
		r.fail(&formats.ParseError{Line: line, Offset: off, Err: fmt.Errorf("%w: message that starts on line %d ends without a closing balance (:62F:)", ErrStructure, m.line)})
		return
	}
	if m.broken {
		return
	}
	if !m.hasNumber {
		r.warn(m.line, m.off, WarnMissing, "message without a statement number (:28C:)")
	}
	st := Statement{Line: m.line, Type: "940", Reference: m.ref, Number: m.number, Account: m.account, Currency: m.cur.Code,
		Entries: m.entries, Credits: m.credits, Debits: m.debits, Balanced: true}
	if mt942 {
		st.Type = "942"
		if t := m.sum90D; t != nil && (t.n != 0 || t.sum != 0) && t.sum != m.debits {
			st.Balanced = false
		}
		if t := m.sum90C; t != nil && (t.n != 0 || t.sum != 0) && t.sum != m.credits {
			st.Balanced = false
		}
		if !st.Balanced {
			r.warn(m.line, m.off, WarnUnbalanced, "MT942 totals (:90D:/:90C:) differ from its lines: debits %s, credits %s",
				money.Format(m.debits, m.cur), money.Format(m.credits, m.cur))
		}
	}
	if m.opening != nil && m.closing != nil {
		st.HasBalances = true
		st.Opening, st.OpeningDate = m.opening.amount, m.opening.date
		st.Closing, st.ClosingDate = m.closing.amount, m.closing.date
		net := m.opening.amount + m.credits - m.debits
		if net != m.closing.amount {
			st.Balanced = false
			r.warn(m.line, m.off, WarnUnbalanced, "statement %q in %s: opening %s plus its lines is %s, the closing balance is %s (difference %s)",
				printable(m.number), m.cur.Code, money.Format(m.opening.amount, m.cur), money.Format(net, m.cur),
				money.Format(m.closing.amount, m.cur), money.Format(m.closing.amount-net, m.cur))
		}
	}
	if r.opts.OnStatement != nil {
		r.opts.OnStatement(st)
	}
}

// impossibleDate refuses a field whose YYMMDD at position at is six digits
// that are no calendar date. A field too garbled to hold a date is left to
// the field's own reading.
func impossibleDate(v string, at int) error {
	if len(v) < at+6 || strings.Trim(v[at:at+6], "0123456789") != "" {
		return nil
	}
	_, err := date(v[at : at+6])
	return err
}

func knownCurrency(code string) bool {
	_, err := currency(code)
	return err == nil
}

// printable keeps the printable ASCII of a code for a Detail or message.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return -1
		}
		return r
	}, strings.TrimSpace(s))
}
