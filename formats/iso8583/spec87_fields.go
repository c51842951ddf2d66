package iso8583

import (
	"github.com/moov-io/iso8583/encoding"
	"github.com/moov-io/iso8583/field"
	"github.com/moov-io/iso8583/prefix"
)

// The data elements the reader interprets. Every other field is decoded
// only to find where the next one starts.
const (
	fieldPAN            = 2
	fieldProcessingCode = 3
	fieldAmount         = 4
	fieldTransmission   = 7
	fieldSTAN           = 11
	fieldLocalTime      = 12
	fieldLocalDate      = 13
	fieldSettlementDate = 15
	fieldAcquirer       = 32
	fieldTrack2         = 35
	fieldRRN            = 37
	fieldCurrency       = 49
	fieldOriginal       = 90
	fieldReplacement    = 95
)

// usedFields are the data elements whose values the reader keeps.
var usedFields = []int{
	fieldPAN, fieldProcessingCode, fieldAmount, fieldTransmission, fieldSTAN, fieldLocalTime,
	fieldLocalDate, fieldSettlementDate, fieldAcquirer, fieldTrack2, fieldRRN, fieldCurrency,
	fieldOriginal, fieldReplacement,
}

// isUsed is usedFields by field number.
var isUsed = func() (used [maxFieldID + 1]bool) {
	for _, id := range usedFields {
		used[id] = true
	}
	return used
}()

// cardDataFields carry a PAN, track data, a PIN block, an expiry date, chip
// data or an account number. Nothing decoded from them, and no decoder
// message about them, ever appears in an error.
var cardDataFields = map[int]bool{
	2: true, 14: true, 34: true, 35: true, 36: true, 45: true, 52: true, 55: true, 102: true, 103: true,
}

// element87 is one data element of ISO 8583:1987 in the form moov's
// Spec87 uses for the first 64: ASCII characters with an ASCII length
// prefix of 0 (fixed), 2 or 3 digits, or 8 binary bytes shown as 16 hex
// digits.
type element87 struct {
	id     int
	length int
	digits int // length prefix digits: 0 fixed, 2 LL, 3 LLL
	binary bool
	desc   string
}

// elements87 are the data elements 66 to 128 of ISO 8583:1987. Bit 65 is
// not among them: with 64-bit bitmaps it announces a third bitmap.
var elements87 = []element87{
	{66, 1, 0, false, "Settlement Code"},
	{67, 2, 0, false, "Extended Payment Code"},
	{68, 3, 0, false, "Receiving Institution Country Code"},
	{69, 3, 0, false, "Settlement Institution Country Code"},
	{70, 3, 0, false, "Network Management Information Code"},
	{71, 4, 0, false, "Message Number"},
	{72, 4, 0, false, "Last Message's Number"},
	{73, 6, 0, false, "Action Date (YYMMDD)"},
	{74, 10, 0, false, "Number of Credits"},
	{75, 10, 0, false, "Credits, Reversal Number"},
	{76, 10, 0, false, "Number of Debits"},
	{77, 10, 0, false, "Debits, Reversal Number"},
	{78, 10, 0, false, "Transfer Number"},
	{79, 10, 0, false, "Transfer, Reversal Number"},
	{80, 10, 0, false, "Number of Inquiries"},
	{81, 10, 0, false, "Number of Authorizations"},
	{82, 12, 0, false, "Credits, Processing Fee Amount"},
	{83, 12, 0, false, "Credits, Transaction Fee Amount"},
	{84, 12, 0, false, "Debits, Processing Fee Amount"},
	{85, 12, 0, false, "Debits, Transaction Fee Amount"},
	{86, 16, 0, false, "Total Amount of Credits"},
	{87, 16, 0, false, "Credits, Reversal Amount"},
	{88, 16, 0, false, "Total Amount of Debits"},
	{89, 16, 0, false, "Debits, Reversal Amount"},
	{90, 42, 0, false, "Original Data Elements"},
	{91, 1, 0, false, "File Update Code"},
	{92, 2, 0, false, "File Security Code"},
	{93, 5, 0, false, "Response Indicator"},
	{94, 7, 0, false, "Service Indicator"},
	{95, 42, 0, false, "Replacement Amounts"},
	{96, 8, 0, true, "Message Security Code"},
	{97, 17, 0, false, "Net Settlement Amount"},
	{98, 25, 0, false, "Payee"},
	{99, 11, 2, false, "Settlement Institution Identification Code"},
	{100, 11, 2, false, "Receiving Institution Identification Code"},
	{101, 17, 2, false, "File Name"},
	{102, 28, 2, false, "Account Identification 1"},
	{103, 28, 2, false, "Account Identification 2"},
	{104, 100, 3, false, "Transaction Description"},
	{105, 999, 3, false, "Reserved for ISO Use"},
	{106, 999, 3, false, "Reserved for ISO Use"},
	{107, 999, 3, false, "Reserved for ISO Use"},
	{108, 999, 3, false, "Reserved for ISO Use"},
	{109, 999, 3, false, "Reserved for ISO Use"},
	{110, 999, 3, false, "Reserved for ISO Use"},
	{111, 999, 3, false, "Reserved for ISO Use"},
	{112, 999, 3, false, "Reserved for National Use"},
	{113, 999, 3, false, "Reserved for National Use"},
	{114, 999, 3, false, "Reserved for National Use"},
	{115, 999, 3, false, "Reserved for National Use"},
	{116, 999, 3, false, "Reserved for National Use"},
	{117, 999, 3, false, "Reserved for National Use"},
	{118, 999, 3, false, "Reserved for National Use"},
	{119, 999, 3, false, "Reserved for National Use"},
	{120, 999, 3, false, "Reserved for Private Use"},
	{121, 999, 3, false, "Reserved for Private Use"},
	{122, 999, 3, false, "Reserved for Private Use"},
	{123, 999, 3, false, "Reserved for Private Use"},
	{124, 999, 3, false, "Reserved for Private Use"},
	{125, 999, 3, false, "Reserved for Private Use"},
	{126, 999, 3, false, "Reserved for Private Use"},
	{127, 999, 3, false, "Reserved for Private Use"},
	{128, 8, 0, true, "Message Authentication Code"},
}

// addFields87 adds to fields every element of elements87 it lacks. A field
// the spec already defines is left as it is.
func addFields87(fields map[int]field.Field) {
	for _, e := range elements87 {
		if _, ok := fields[e.id]; ok {
			continue
		}
		sp := &field.Spec{Length: e.length, Description: e.desc, Enc: encoding.ASCII}
		switch {
		case e.binary:
			sp.Enc, sp.Pref = encoding.BytesToASCIIHex, prefix.Hex.Fixed
		case e.digits == 2:
			sp.Pref = prefix.ASCII.LL
		case e.digits == 3:
			sp.Pref = prefix.ASCII.LLL
		default:
			sp.Pref = prefix.ASCII.Fixed
		}
		fields[e.id] = field.NewString(sp)
	}
}
