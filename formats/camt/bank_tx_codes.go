package camt

import (
	"strings"

	"github.com/clearing-dev/clearing/formats"
)

// bankTxCodes maps ISO 20022 bank transaction codes to line types. The most
// specific key wins: "DOMN/FMLY/SUBF", then "DOMN/FMLY", then "DOMN".
// Anything not listed is a Payment, which reconciliation matches one to
// one, so a misfiled code can only surface as a break, never explain one
// away (the same rule as bai2's type codes). The table is in
// docs/formats/camt.md; Options.BankTxCodes extends or overrides it.
//
// Settlement totals are not here: an entry is a settlement total because it
// carries several transaction details that add up to it, whatever its code.
var bankTxCodes = map[string]formats.LineType{
	// Returns and reversals (sub-families that every domain uses).
	"*/*/RRTN": formats.ReturnLine, // reversal due to return
	"*/*/UPDD": formats.ReturnLine, // reversal due to return or unpaid direct debit
	"*/*/RPCR": formats.ReturnLine, // reversal due to payment cancellation request
	"*/*/PRDD": formats.ReturnLine, // reversal due to payment reversal
	"*/*/ARET": formats.ReturnLine, // ACH return
	"*/*/AREV": formats.ReturnLine, // ACH reversal
	"*/*/UPCQ": formats.ReturnLine, // unpaid cheque
	"*/*/CQRV": formats.ReturnLine, // cheque reversal
	"*/*/UPCT": formats.ReturnLine, // unpaid card transaction
	"*/*/RVSL": formats.ReturnLine, // reversal
	// Charges, fees and commissions.
	"*/*/CHRG": formats.Fee, // charges
	"*/*/FEES": formats.Fee, // fees
	"*/*/COMM": formats.Fee, // commission
	"*/*/COMT": formats.Fee, // non-taxable commissions
	"*/*/SUBS": formats.Fee, // subscription
	"*/*/BRKF": formats.Fee, // brokerage fee
	"*/*/CHRS": formats.Fee, // charges (securities)
	"*/CHRG":   formats.Fee, // family: charges
}

// lineType gives the line type of a bank transaction code: a reversal is
// always a return line; otherwise the most specific match in over, then in
// the table, then Payment.
func lineType(c *xBkTxCd, reversal bool, over map[string]formats.LineType) formats.LineType {
	if reversal {
		return formats.ReturnLine
	}
	d := strings.TrimSpace(c.Domn.Cd)
	f := strings.TrimSpace(c.Domn.Fmly.Cd)
	s := strings.TrimSpace(c.Domn.Fmly.SubFmlyCd)
	p := strings.TrimSpace(c.Prtry.Cd)
	var keys []string
	if d != "" {
		keys = append(keys, d+"/"+f+"/"+s, d+"/"+f, d)
	}
	if p != "" {
		keys = append(keys, "prtry:"+p)
	}
	for _, k := range keys {
		if lt, ok := over[k]; ok {
			return lt
		}
	}
	if d != "" {
		for _, k := range []string{"*/*/" + s, "*/" + f} {
			if lt, ok := bankTxCodes[k]; ok {
				return lt
			}
		}
	}
	return formats.Payment
}

// codeText is the bank transaction code for a Record's Detail: the ISO code
// as DOMN/FMLY/SUBF, else the proprietary code. Both are code lists, not
// free text.
func codeText(c *xBkTxCd) string {
	var s string
	if d := strings.TrimSpace(c.Domn.Cd); d != "" {
		s = d + "/" + strings.TrimSpace(c.Domn.Fmly.Cd) + "/" + strings.TrimSpace(c.Domn.Fmly.SubFmlyCd)
	} else if p := strings.TrimSpace(c.Prtry.Cd); p != "" {
		s = p
	}
	if len(s) > 40 {
		s = s[:40]
	}
	return s
}
