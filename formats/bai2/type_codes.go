package bai2

import (
	"fmt"
	"strconv"

	"github.com/clearing-dev/clearing/formats"
)

// Level is where the specification allows a type code.
type Level int8

// The levels of Appendix A.
const (
	LevelStatus  Level = iota + 1 // a balance or float on an 03 record
	LevelSummary                  // an activity total on an 03 record
	LevelDetail                   // a transaction on a 16 record
)

// TypeCode describes a BAI2 type code and how a transaction detail that
// carries it maps to a Record.
type TypeCode struct {
	Code  int
	Name  string
	Level Level
	// Direction is the side of the reported account that the money moves:
	// Credit for codes 100-399 (money in), Debit for 400-699 (money out),
	// empty for status codes and non-monetary information (890).
	Direction formats.Direction
	// LineType classifies the statement line: ReturnLine, Fee or
	// SettlementTotal for the codes in the tables below, Payment otherwise.
	LineType formats.LineType
}

// Line types by code. The lists are deliberately narrow: a code is listed
// only where the specification's own name says it is a return or reversal,
// a fee, or a settlement or lockbox total. Anything else is a Payment, which
// reconciliation matches one to one; a misfiled code can then only surface
// as a break for a person, never explain one away. A source that knows its
// bank better overrides single codes through Options.TypeCodes.
var (
	returnCodes = map[int]bool{
		123: true, // EDIBANX Credit Return
		252: true, // Debit Reversal
		255: true, // Check Posted and Returned
		257: true, // Individual ACH Return Item
		258: true, // ACH Reversal Credit
		266: true, // Return Item
		395: true, // Check Reversal
		423: true, // EDIBANX Return Item Debit
		552: true, // Credit Reversal
		555: true, // Deposited Item Returned
		557: true, // Individual ACH Return Item
		558: true, // ACH Reversal Debit
		566: true, // Return Item
		694: true, // Deposit Reversal
	}
	feeCodes = map[int]bool{
		398: true, // Miscellaneous Fee Refund
		564: true, // Overdraft Fee
		567: true, // Return Item Fee
		661: true, // Account Analysis Fee
		698: true, // Miscellaneous Fees
	}
	settlementCodes = map[int]bool{
		109: true, // Current Day Total Lockbox Deposits
		110: true, // Total Lockbox Deposits
		115: true, // Lockbox Deposit
		162: true, // Corporate Trade Payment Settlement
		166: true, // ACH Settlement
		167: true, // ACH Settlement Credits
		168: true, // ACH Return Item or Adjustment Settlement
		369: true, // Clearing Settlement Credit
		422: true, // EDIBANX Settlement Debit
		465: true, // Corporate Trade Payment Settlement
		466: true, // ACH Settlement
		467: true, // ACH Settlement Debits
		468: true, // ACH Return Item or Adjustment Settlement
		669: true, // Clearing Settlement Debit
	}
)

// LookupTypeCode returns the specification's description of a uniform type
// code, with the direction and line type a transaction detail carrying it
// gets. Customised codes (900-999) are not known to it.
func LookupTypeCode(code int) (TypeCode, bool) {
	n, ok := typeCodeNames[code]
	if !ok {
		return TypeCode{}, false
	}
	tc := TypeCode{Code: code, Name: n.name, Level: n.level}
	if n.level != LevelStatus {
		tc.Direction = rangeDirection(code)
		tc.LineType = lineType(code)
	}
	return tc, true
}

// rangeDirection gives the direction the specification's ranges fix for a
// code: 100-399 credit, 400-699 debit, and for the banks' customised codes
// 920-959 credit and 960-999 debit.
func rangeDirection(code int) formats.Direction {
	switch {
	case code >= 100 && code <= 399, code >= 920 && code <= 959:
		return formats.Credit
	case code >= 400 && code <= 699, code >= 960 && code <= 999:
		return formats.Debit
	}
	return ""
}

func lineType(code int) formats.LineType {
	switch {
	case returnCodes[code]:
		return formats.ReturnLine
	case feeCodes[code]:
		return formats.Fee
	case settlementCodes[code]:
		return formats.SettlementTotal
	}
	return formats.Payment
}

// nonMonetary is the code for a detail that only carries information.
const nonMonetary = 890

// detailType resolves the type code of a transaction detail. Overrides win;
// then the uniform codes 100-699 and 890; then the customised credit and
// debit ranges. Status codes, loan codes (700-799) and customised status
// codes (900-919) have no direction a detail could take, so they are refused
// unless a source declares them.
func detailType(code int, overrides map[int]TypeCode) (TypeCode, error) {
	if tc, ok := overrides[code]; ok {
		tc.Code = code
		if tc.Direction != "" && tc.Direction != formats.Credit && tc.Direction != formats.Debit {
			return TypeCode{}, fmt.Errorf("%w: %03d is configured with direction %q", ErrTypeCode, code, tc.Direction)
		}
		if tc.LineType == "" {
			tc.LineType = formats.Payment
		}
		if tc.Name == "" {
			tc.Name = "customised type code"
		}
		return tc, nil
	}
	if code == nonMonetary {
		tc, _ := LookupTypeCode(code)
		return tc, nil
	}
	if code >= 100 && code <= 699 {
		if tc, ok := LookupTypeCode(code); ok {
			return tc, nil
		}
		name := "unlisted credit type code"
		if code >= 400 {
			name = "unlisted debit type code"
		}
		return TypeCode{Code: code, Name: name, Level: LevelDetail, Direction: rangeDirection(code), LineType: formats.Payment}, nil
	}
	if d := rangeDirection(code); d != "" {
		name := "customised credit type code"
		if d == formats.Debit {
			name = "customised debit type code"
		}
		return TypeCode{Code: code, Name: name, Level: LevelDetail, Direction: d, LineType: formats.Payment}, nil
	}
	return TypeCode{}, fmt.Errorf("%w: %03d has no credit or debit direction for a transaction detail", ErrTypeCode, code)
}

// parseTypeCode reads a three-digit type code.
func parseTypeCode(f []byte) (int, error) {
	if len(f) == 0 {
		return 0, fmt.Errorf("%w: type code", ErrMissingField)
	}
	if len(f) != 3 || !allDigits(f) {
		return 0, fmt.Errorf("%w: type code %q is not three digits", ErrField, f)
	}
	n, _ := strconv.Atoi(string(f))
	return n, nil
}
