package ach

import "github.com/clearing-dev/clearing/formats"

// txClass says what kind of entry a transaction code announces.
type txClass uint8

const (
	txUnknown    txClass = iota
	txForward            // a live credit or debit: 22, 27, 32, 37, 42, 47, 52, 55
	txReturnNOC          // a return or notification of change: 21, 26, 31, 36, 41, 46, 51, 56
	txPrenote            // a prenotification: 23, 28, 33, 38, 43, 48, 53
	txZeroDollar         // a zero-dollar entry with remittance data: 24, 29, 34, 39, 44, 49, 54
	txAdvice             // an ADV accounting entry: 81 to 88
)

// txCode is what the reader needs to know about one transaction code.
type txCode struct {
	class txClass
	// dir is the side of the receiver's account the code names. For return
	// and notification codes (x1, x6) it is the side of the original entry:
	// 21 is the return of a credit to a checking account.
	dir formats.Direction
}

// lookupTx classifies a NACHA transaction code. The first digit names the
// account type (2 checking, 3 savings, 4 general ledger, 5 loan, 8 ADV
// accounting); the second the kind of entry and its side.
func lookupTx(code int) (txCode, bool) {
	if code >= 81 && code <= 88 {
		// ADV codes alternate: odd codes are credits (81 credit for debits
		// originated, 83 credit for credits received, 85 credit for credits
		// in rejected batches, 87 summary credit), even codes debits.
		if code%2 == 1 {
			return txCode{txAdvice, formats.Credit}, true
		}
		return txCode{txAdvice, formats.Debit}, true
	}
	account, kind := code/10, code%10
	if account < 2 || account > 5 {
		return txCode{}, false
	}
	switch kind {
	case 1:
		return txCode{txReturnNOC, formats.Credit}, true
	case 2:
		return txCode{txForward, formats.Credit}, true
	case 3:
		return txCode{txPrenote, formats.Credit}, true
	case 4:
		return txCode{txZeroDollar, formats.Credit}, true
	case 6:
		return txCode{txReturnNOC, formats.Debit}, true
	}
	if account == 5 {
		// Loan accounts take no debit prenotes or zero-dollar debits, and
		// their one debit code is 55 (reversals only).
		if kind == 5 {
			return txCode{txForward, formats.Debit}, true
		}
		return txCode{}, false
	}
	switch kind {
	case 7:
		return txCode{txForward, formats.Debit}, true
	case 8:
		return txCode{txPrenote, formats.Debit}, true
	case 9:
		return txCode{txZeroDollar, formats.Debit}, true
	}
	return txCode{}, false
}

// word returns "credit" or "debit" for Detail texts.
func word(d formats.Direction) string {
	if d == formats.Credit {
		return "credit"
	}
	return "debit"
}
