package mt940

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/formats/internal/statement"
)

// statementLine reads a :61: field into the pending record, which its
// :86: fields complete.
func (r *Reader) statementLine(ev *event) {
	m := r.msg
	mt942 := m.is942 || m.typ == "942"
	switch {
	case !m.hasAcct:
		r.failAt(ev, "61", fmt.Errorf("%w: statement line before the account (:25:)", ErrStructure))
		return
	case m.opening == nil && !mt942:
		r.failAt(ev, "61", fmt.Errorf("%w: statement line before the opening balance (:60F:)", ErrStructure))
		return
	case m.closing != nil:
		r.failAt(ev, "61", fmt.Errorf("%w: statement line after the closing balance (:62F:)", ErrStructure))
		return
	case !m.hasCur:
		r.failAt(ev, "61", fmt.Errorf("%w: statement line before any field that gives the currency", ErrStructure))
		return
	}
	l, err := parseLine61(strings.TrimSpace(ev.lines[0]), m.cur)
	if err != nil {
		r.failAt(ev, "61", err)
		return
	}
	l.bankRef = unwrapRef(l.bankRef, ev.lines)
	if l.noComma {
		r.warn(ev.line, ev.offset, WarnAmountComma, "amount without a decimal comma, read as whole %s", m.cur.Code)
	}
	m.entries++
	if l.dir == formats.Credit {
		if m.credits > maxTotal-l.amount {
			r.failAt(ev, "61", fmt.Errorf("%w: the statement's lines sum past the limit", ErrAmount))
			return
		}
		m.credits += l.amount
	} else {
		if m.debits > maxTotal-l.amount {
			r.failAt(ev, "61", fmt.Errorf("%w: the statement's lines sum past the limit", ErrAmount))
			return
		}
		m.debits += l.amount
	}
	kind := "MT940"
	if mt942 {
		kind = "MT942"
	}
	rec := formats.Record{
		Key:       r.key(&l),
		Kind:      formats.Clearing,
		Detail:    kind + " " + printable(l.txType),
		Amount:    l.amount,
		Currency:  m.cur.Code,
		Direction: l.dir,
		Account:   m.account,
		ValueDate: l.value,
		LineType:  lineType(&l, r.opts.TypeCodes),
		Line:      ev.line,
		Offset:    ev.offset,
	}
	if l.reversal {
		rec.Detail += " reversal"
	}
	if l.amount == 0 {
		rec.Kind = formats.Notice
	}
	m.pending, m.line61 = &rec, l
	m.info.Reset()
}

// key is "mt940:<account token>:<statement>:<value date>:<bank reference>",
// or with "#n", the line's position among the statement's lines without a
// bank reference. A reference repeated on adjacent lines of one value date
// gets "~2", "~3". An unnumbered statement (":28C:0", as many German banks
// send) is told apart by its opening balance: "0@2020-02-19C308500".
func (r *Reader) key(l *line61) string {
	m := r.msg
	if m.stmtSeg == "" {
		num, _, _ := strings.Cut(m.number, "/")
		seg := statement.KeySegment(m.number)
		if strings.Trim(num, "0") == "" {
			if seg == "" {
				seg = "0"
			}
			switch {
			case m.opening != nil:
				sign, v := "C", m.opening.amount
				if v < 0 {
					sign, v = "D", -v
				}
				seg += "@" + m.opening.date.Format(time.DateOnly) + sign + fmt.Sprint(v)
			case m.dt13 != "":
				seg += "@" + statement.KeySegment(m.dt13)
			}
		}
		m.stmtSeg = seg
	}
	base := "mt940:" + m.token + ":" + m.stmtSeg + ":" + l.value.Format(time.DateOnly) + ":"
	bank := ref(l.bankRef)
	if bank == "" {
		m.blank++
		m.lastRef, m.refRun = "", 0
		return base + "#" + fmt.Sprint(m.blank)
	}
	seq := l.value.Format(time.DateOnly) + "|" + bank
	if m.refRun > 0 && seq == m.lastRef {
		m.refRun++
		return base + statement.KeySegment(bank) + "~" + fmt.Sprint(m.refRun)
	}
	m.lastRef, m.refRun = seq, 1
	return base + statement.KeySegment(bank)
}

// flushPending completes the pending statement line with the references
// of its :86: and returns it.
func (r *Reader) flushPending() {
	m := r.msg
	if m == nil || m.pending == nil {
		return
	}
	rec := m.pending
	m.pending = nil
	in := parseInfo(m.info.String())
	m.info.Reset()
	var refs []string
	for _, s := range []string{in.eref, m.line61.custRef, in.kref, in.remi, m.line61.bankRef} {
		if s = ref(s); s != "" && !slices.Contains(refs, s) {
			refs = append(refs, s)
		}
	}
	if len(refs) > 0 {
		rec.Reference = refs[0]
	}
	if len(refs) > 1 {
		rec.AltReference = refs[1]
	}
	if in.gvc != "" {
		rec.Detail += " GVC " + in.gvc
	}
	r.emit(*rec)
}

// unwrapRef joins a bank reference that a bank wrapped onto the next line
// of :61: (ING writes "...//00000000001" and then "005"): when the
// reference and the whole second line are digits and together fit the 16
// characters a reference may have. Anything else on the second line is
// supplementary details.
func unwrapRef(bank string, lines []string) string {
	if bank == "" || len(lines) < 2 {
		return bank
	}
	next := strings.TrimSpace(lines[1])
	if next == "" || len(bank)+len(next) > 16 || strings.Trim(bank+next, "0123456789") != "" {
		return bank
	}
	return bank + next
}
