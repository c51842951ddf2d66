package ach

import (
	"fmt"
	"io"
	"iter"
	"time"

	moov "github.com/moov-io/ach"
)

// WriteIAT writes a file of IAT entries to w: each entry with the seven
// mandatory addenda (10 to 16), filled with the entry's amount, names and
// fixed, fictitious addresses. An entry's CompanyID is the batch's
// originator identification; its SEC field is ignored.
func WriteIAT(w io.Writer, h Header, entries iter.Seq[Entry]) error {
	fw := newFileWriter(w, h, false)
	for e := range entries {
		if err := e.check(true); err != nil {
			fw.fail(err)
			break
		}
		seq := int(mustNumber(e.Trace[8:]))
		ed := moov.NewIATEntryDetail()
		ed.TransactionCode, ed.AddendaRecords, ed.Amount = e.TransactionCode, 7, int(e.Amount)
		ed.SetRDFI(e.RDFI)
		ed.DFIAccountNumber, ed.AddendaRecordIndicator, ed.TraceNumber = e.Account, 1, e.Trace
		a10 := moov.NewAddenda10()
		a10.TransactionTypeCode, a10.ForeignPaymentAmount, a10.Name = "BUS", int(e.Amount), e.Name
		a11 := moov.NewAddenda11()
		a11.OriginatorName, a11.OriginatorStreetAddress = e.CompanyName, "1 KING STREET"
		a12 := moov.NewAddenda12()
		a12.OriginatorCityStateProvince, a12.OriginatorCountryPostalCode = `TORONTO*ON\`, `CA*M5H2N2\`
		a13 := moov.NewAddenda13()
		a13.ODFIName, a13.ODFIIDNumberQualifier, a13.ODFIIdentification = "ORIGINATING BANK", "01", routing9(e.ODFI)
		a13.ODFIBranchCountryCode = "US"
		a14 := moov.NewAddenda14()
		a14.RDFIName, a14.RDFIIDNumberQualifier, a14.RDFIIdentification = "RECEIVING BANK", "01", e.RDFI
		a14.RDFIBranchCountryCode = "US"
		a15 := moov.NewAddenda15()
		a15.ReceiverIDNumber, a15.ReceiverStreetAddress = "ID"+e.Trace[8:], "2 MARKET STREET"
		a16 := moov.NewAddenda16()
		a16.ReceiverCityStateProvince, a16.ReceiverCountryPostalCode = `NEW YORK*NY\`, `US*10001\`
		a10.EntryDetailSequenceNumber, a11.EntryDetailSequenceNumber, a12.EntryDetailSequenceNumber = seq, seq, seq
		a13.EntryDetailSequenceNumber, a14.EntryDetailSequenceNumber, a15.EntryDetailSequenceNumber = seq, seq, seq
		a16.EntryDetailSequenceNumber = seq
		fw.entry(batchKey{kind: kindIAT, sec: moov.IAT, company: e.CompanyID, date: e.EffectiveDate,
			odfi: e.ODFI, description: "TRADEPAYMT"},
			e.Trace, e.RDFI, e.Amount, e.TransactionCode, ed, a10, a11, a12, a13, a14, a15, a16)
	}
	return fw.close()
}

// Advice is one ADV (automated accounting advice) entry for the generator.
type Advice struct {
	CompanyID       string
	CompanyName     string
	EffectiveDate   time.Time
	ODFI            string // 8-digit routing prefix in the batch header
	TransactionCode int    // 81 to 88
	Amount          int64  // cents
	RDFI            string // 9-digit routing number of the account's bank
	Account         string
	// Operator, JulianDay and Sequence identify the advice: the ACH
	// operator's 8-digit routing prefix, the day of the year (1-366) and a
	// sequence number (1-9999).
	Operator  string
	JulianDay int
	Sequence  int
}

// ID returns the 15-digit identifier the Reader uses as the advice's trace
// number: operator, Julian day and sequence number.
func (a Advice) ID() string { return fmt.Sprintf("%s%03d%04d", a.Operator, a.JulianDay, a.Sequence) }

// Key returns the Reader's key for the advice.
func (a Advice) Key() string { return Key(a.CompanyID, a.EffectiveDate, a.ID()) }

// check reports what keeps a from being written as a valid advice.
func (a Advice) check() error {
	switch {
	case a.TransactionCode < 81 || a.TransactionCode > 88:
		return fmt.Errorf("ach: generator: ADV transaction code %d", a.TransactionCode)
	case a.JulianDay < 1 || a.JulianDay > 366 || a.Sequence < 1 || a.Sequence > 9999:
		return fmt.Errorf("ach: generator: Julian day %d or sequence number %d out of range", a.JulianDay, a.Sequence)
	case len(a.ODFI) != 8 || !isDigits(a.ODFI):
		return fmt.Errorf("ach: generator: ODFI %q is not 8 digits", a.ODFI)
	}
	return checkIDs(a.ID(), a.Operator, a.RDFI, a.Amount)
}

// WriteAdvices writes an ADV file to w.
func WriteAdvices(w io.Writer, h Header, advices iter.Seq[Advice]) error {
	fw := newFileWriter(w, h, true)
	for a := range advices {
		if err := a.check(); err != nil {
			fw.fail(err)
			break
		}
		ed := moov.NewADVEntryDetail()
		ed.TransactionCode, ed.Amount = a.TransactionCode, int(a.Amount)
		ed.RDFIIdentification, ed.CheckDigit = a.RDFI[:8], a.RDFI[8:]
		ed.DFIAccountNumber, ed.AdviceRoutingNumber, ed.FileIdentification = a.Account, a.RDFI, "00001"
		ed.IndividualName = "ADVICE " + a.ID()[8:]
		ed.ACHOperatorRoutingNumber, ed.JulianDay, ed.SequenceNumber = a.Operator, a.JulianDay, a.Sequence
		fw.entry(batchKey{kind: kindADV, sec: moov.ADV, company: a.CompanyID, name: a.CompanyName,
			date: a.EffectiveDate, odfi: a.ODFI, description: "ACCOUNTING"},
			a.ID(), a.RDFI, a.Amount, a.TransactionCode, ed)
	}
	return fw.close()
}
