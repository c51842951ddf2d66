package ach

import (
	"fmt"
	"io"
	"iter"
	"time"

	moov "github.com/moov-io/ach"

	"github.com/clearing-dev/clearing/formats"
)

// Return is a return of an earlier entry, or a dishonored or contested
// dishonored return, for the generator. The kind follows from Code: R61-R70
// (moov-io/ach's dishonored codes) make a dishonored return, R71-R77 a
// contested one, any other code a return. Build them with ReturnOf,
// DishonorOf and ContestOf.
type Return struct {
	Original Entry  // the forward entry, as it was sent
	Code     string // the return, dishonored or contested return reason code
	// Trace is the entry's own trace number. It starts with the routing
	// prefix of the bank that sends it: the original RDFI for a return and
	// a contested return, the original ODFI for a dishonored return.
	Trace string
	// EffectiveDate is the batch's effective entry date; the zero time
	// writes a blank date, as many return files carry.
	EffectiveDate time.Time
	// ReturnTrace and ReturnCode name the return that a dishonored or
	// contested return answers.
	ReturnTrace, ReturnCode string
	// DishonoredTrace and DishonoredCode name the dishonored return that a
	// contested return answers.
	DishonoredTrace, DishonoredCode string
}

// Key returns the Reader's key for the return entry itself. The ledger
// posts it under a key derived from the original's (see formats.Link).
func (r Return) Key() string {
	if r.EffectiveDate.IsZero() {
		return keyWithDate(r.Original.CompanyID, noDateKey, r.Trace)
	}
	return Key(r.Original.CompanyID, r.EffectiveDate, r.Trace)
}

// ReturnOf returns a return of original with code, sent by the original
// RDFI with the trace sequence number seq and no effective entry date.
func ReturnOf(original Entry, code string, seq int) Return {
	return Return{Original: original, Code: code, Trace: fmt.Sprintf("%s%07d", original.RDFI[:8], seq)}
}

// DishonorOf returns the original ODFI's dishonored return of ret with code
// (R61-R70) and the trace sequence number seq.
func DishonorOf(ret Return, code string, seq int) Return {
	return Return{Original: ret.Original, Code: code, Trace: fmt.Sprintf("%s%07d", ret.Original.ODFI, seq),
		ReturnTrace: ret.Trace, ReturnCode: ret.Code}
}

// ContestOf returns the original RDFI's contested dishonored return of dis
// with code (R71-R77) and the trace sequence number seq.
func ContestOf(dis Return, code string, seq int) Return {
	return Return{Original: dis.Original, Code: code, Trace: fmt.Sprintf("%s%07d", dis.Original.RDFI[:8], seq),
		ReturnTrace: dis.ReturnTrace, ReturnCode: dis.ReturnCode, DishonoredTrace: dis.Trace, DishonoredCode: dis.Code}
}

// returnCode is the transaction code of a return or notification of change
// of an entry with code: 22, 23 and 24 become 21; 27, 28 and 29 become 26;
// and so on for savings, general ledger and loan accounts (55 becomes 56).
func returnCode(code int) int {
	tx, _ := lookupTx(code)
	if tx.dir == formats.Credit {
		return code/10*10 + 1
	}
	return code/10*10 + 6
}

// WriteReturns writes a file of returns, dishonored returns and contested
// dishonored returns to w, one batch per sending bank, company and date.
func WriteReturns(w io.Writer, h Header, returns iter.Seq[Return]) error {
	fw := newFileWriter(w, h, false)
	for r := range returns {
		o := r.Original
		if err := o.check(false); err != nil {
			fw.fail(err)
			break
		}
		if err := checkIDs(r.Trace, r.Trace[:min(8, len(r.Trace))], o.RDFI, o.Amount); err != nil {
			fw.fail(err)
			break
		}
		// The entry goes back the way the original came: a return and a
		// contested return to the original ODFI, a dishonored return to the
		// original RDFI.
		to := routing9(o.ODFI)
		if moov.IsDishonoredReturnCode(r.Code) {
			to = o.RDFI
		}
		ed := standardEntry(o, returnCode(o.TransactionCode), to)
		ed.TraceNumber, ed.AddendaRecordIndicator = r.Trace, 1
		var addenda fmt.Stringer
		switch {
		case moov.IsDishonoredReturnCode(r.Code):
			a := moov.NewAddenda99Dishonored()
			a.DishonoredReturnReasonCode, a.OriginalEntryTraceNumber = r.Code, o.Trace
			a.OriginalReceivingDFIIdentification = o.RDFI[:8]
			a.ReturnTraceNumber, a.ReturnReasonCode = r.ReturnTrace, reasonDigits(r.ReturnCode)
			a.TraceNumber = r.Trace
			addenda = a
		case moov.IsContestedReturnCode(r.Code):
			a := moov.NewAddenda99Contested()
			a.ContestedReturnCode, a.OriginalEntryTraceNumber = r.Code, o.Trace
			a.DateOriginalEntryReturned = o.EffectiveDate.Format("060102")
			a.OriginalReceivingDFIIdentification = o.RDFI[:8]
			a.ReturnTraceNumber, a.ReturnReasonCode = r.ReturnTrace, reasonDigits(r.ReturnCode)
			a.DishonoredReturnTraceNumber, a.DishonoredReturnReasonCode = r.DishonoredTrace, reasonDigits(r.DishonoredCode)
			a.TraceNumber = r.Trace
			addenda = a
		default:
			a := moov.NewAddenda99()
			a.ReturnCode, a.OriginalTrace, a.OriginalDFI = r.Code, o.Trace, o.RDFI[:8]
			a.TraceNumber = r.Trace
			addenda = a
		}
		fw.entry(batchKey{kind: kindStandard, sec: o.SEC, company: o.CompanyID, name: o.CompanyName,
			date: r.EffectiveDate, odfi: r.Trace[:8], description: "RETURN"},
			r.Trace, to, o.Amount, ed.TransactionCode, ed, addenda)
	}
	return fw.close()
}

// reasonDigits drops the R of a return reason code: a dishonored or
// contested return repeats earlier codes in two-digit fields.
func reasonDigits(code string) string {
	if len(code) == 3 && code[0] == 'R' {
		return code[1:]
	}
	return code
}

// Notice is a notification of change (NOC) of an earlier entry, for the
// generator. Build one with NoticeOf.
type Notice struct {
	Original      Entry
	Code          string // change code, C01 to C13
	CorrectedData string // the corrected value the change code names
	// Trace is the NOC entry's own trace number; it starts with the
	// original RDFI's 8-digit routing prefix.
	Trace string
	// EffectiveDate is the batch's effective entry date; the zero time
	// writes a blank date.
	EffectiveDate time.Time
}

// Key returns the Reader's key for the NOC entry itself.
func (n Notice) Key() string {
	if n.EffectiveDate.IsZero() {
		return keyWithDate(n.Original.CompanyID, noDateKey, n.Trace)
	}
	return Key(n.Original.CompanyID, n.EffectiveDate, n.Trace)
}

// NoticeOf returns the original RDFI's notification of change of original
// with code, corrected data and the trace sequence number seq.
func NoticeOf(original Entry, code, corrected string, seq int) Notice {
	return Notice{Original: original, Code: code, CorrectedData: corrected,
		Trace: fmt.Sprintf("%s%07d", original.RDFI[:8], seq)}
}

// WriteNotices writes a file of notifications of change to w, in COR
// batches.
func WriteNotices(w io.Writer, h Header, notices iter.Seq[Notice]) error {
	fw := newFileWriter(w, h, false)
	for n := range notices {
		o := n.Original
		if err := o.check(false); err != nil {
			fw.fail(err)
			break
		}
		if err := checkIDs(n.Trace, n.Trace[:min(8, len(n.Trace))], o.RDFI, 0); err != nil {
			fw.fail(err)
			break
		}
		to := routing9(o.ODFI)
		ed := standardEntry(o, returnCode(o.TransactionCode), to)
		ed.SetSECCode(moov.COR)
		ed.Amount, ed.TraceNumber, ed.AddendaRecordIndicator, ed.DiscretionaryData = 0, n.Trace, 1, ""
		a := moov.NewAddenda98()
		a.ChangeCode, a.OriginalTrace, a.OriginalDFI = n.Code, o.Trace, o.RDFI[:8]
		a.CorrectedData, a.TraceNumber = n.CorrectedData, n.Trace
		fw.entry(batchKey{kind: kindStandard, sec: moov.COR, company: o.CompanyID, name: o.CompanyName,
			date: n.EffectiveDate, odfi: n.Trace[:8], description: "NOC"},
			n.Trace, to, 0, ed.TransactionCode, ed, a)
	}
	return fw.close()
}
