package ach

import (
	moov "github.com/moov-io/ach"
)

// openBatch writes the header of a new batch for k.
func (fw *fileWriter) openBatch(k batchKey) {
	fw.open, fw.key, fw.n, fw.trace, fw.batch = true, k, 0, "", totals{}
	fw.number++
	date := ""
	if !k.date.IsZero() {
		date = k.date.Format("060102")
	}
	switch k.kind {
	case kindIAT:
		bh := moov.NewIATBatchHeader()
		bh.ServiceClassCode = moov.MixedDebitsAndCredits
		bh.ForeignExchangeIndicator, bh.ForeignExchangeReferenceIndicator = "FF", 3
		bh.ISODestinationCountryCode = "US"
		bh.OriginatorIdentification = k.company
		bh.StandardEntryClassCode = moov.IAT
		bh.CompanyEntryDescription = k.description
		bh.ISOOriginatingCurrencyCode, bh.ISODestinationCurrencyCode = "CAD", "USD"
		bh.EffectiveEntryDate = date
		bh.OriginatorStatusCode = 1
		bh.ODFIIdentification, bh.BatchNumber = k.odfi, fw.number
		fw.line(bh.String())
	default:
		bh := moov.NewBatchHeader()
		bh.ServiceClassCode = moov.MixedDebitsAndCredits
		bh.OriginatorStatusCode = 1
		if k.kind == kindADV {
			bh.ServiceClassCode, bh.OriginatorStatusCode = moov.AutomatedAccountingAdvices, 0
		}
		bh.CompanyName, bh.CompanyIdentification = k.name, k.company
		bh.StandardEntryClassCode, bh.CompanyEntryDescription = k.sec, k.description
		bh.EffectiveEntryDate = date
		bh.ODFIIdentification, bh.BatchNumber = k.odfi, fw.number
		fw.line(bh.String())
	}
}

// closeBatch writes the control record of the open batch, if any, and adds
// its totals to the file's.
func (fw *fileWriter) closeBatch() {
	if !fw.open {
		return
	}
	fw.open = false
	k, t := fw.key, fw.batch
	if err := checkControl("the batch", t, maxBatchEntries); err != nil {
		fw.fail(err)
		return
	}
	switch k.kind {
	case kindADV:
		bc := moov.NewADVBatchControl()
		bc.ServiceClassCode = moov.AutomatedAccountingAdvices
		bc.EntryAddendaCount, bc.EntryHash = int(t.count), int(t.hash%hashModulus)
		bc.TotalDebitEntryDollarAmount, bc.TotalCreditEntryDollarAmount = int(t.debit), int(t.credit)
		bc.ACHOperatorData = k.name
		bc.ODFIIdentification, bc.BatchNumber = k.odfi, fw.number
		fw.line(bc.String())
	default:
		bc := moov.NewBatchControl()
		bc.ServiceClassCode = moov.MixedDebitsAndCredits
		bc.EntryAddendaCount, bc.EntryHash = int(t.count), int(t.hash%hashModulus)
		bc.TotalDebitEntryDollarAmount, bc.TotalCreditEntryDollarAmount = int(t.debit), int(t.credit)
		if k.kind != kindIAT {
			bc.CompanyIdentification = k.company
		}
		bc.ODFIIdentification, bc.BatchNumber = k.odfi, fw.number
		fw.line(bc.String())
	}
	fw.batches++
	fw.file.add(t)
}
