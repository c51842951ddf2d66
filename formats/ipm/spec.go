package ipm

import (
	"fmt"

	"github.com/moov-io/iso8583"
	"github.com/moov-io/iso8583/encoding"
	"github.com/moov-io/iso8583/field"
	"github.com/moov-io/iso8583/prefix"
)

// layout is how one data element is written: fixed or with a 2- or 3-digit
// length prefix, of at most length characters (exactly, when fixed).
type layout struct {
	lenDigits int // 0 fixed, 2 LLVAR, 3 LLLVAR
	length    int
	binary    bool
	desc      string
}

// ipmFields is the IPM message layout (ISO 8583:1993 as Mastercard uses
// it in clearing), as public IPM parsers and the corpus lay it out. Only
// these elements may appear; any other is a decode error, because a file
// that carries one is either not IPM or read with the wrong framing.
var ipmFields = map[int]layout{
	2:   {2, 19, false, "Primary Account Number"},
	3:   {0, 6, false, "Processing Code"},
	4:   {0, 12, false, "Amount, Transaction"},
	5:   {0, 12, false, "Amount, Reconciliation"},
	6:   {0, 12, false, "Amount, Cardholder Billing"},
	9:   {0, 8, false, "Conversion Rate, Reconciliation"},
	10:  {0, 8, false, "Conversion Rate, Cardholder Billing"},
	12:  {0, 12, false, "Date and Time, Local Transaction"},
	14:  {0, 4, false, "Expiration Date"},
	22:  {0, 12, false, "Point of Service Data Code"},
	23:  {0, 3, false, "Card Sequence Number"},
	24:  {0, 3, false, "Function Code"},
	25:  {0, 4, false, "Message Reason Code"},
	26:  {0, 4, false, "Card Acceptor Business Code"},
	30:  {0, 24, false, "Amounts, Original"},
	31:  {2, 23, false, "Acquirer Reference Data"},
	32:  {2, 11, false, "Acquiring Institution ID Code"},
	33:  {2, 11, false, "Forwarding Institution ID Code"},
	37:  {0, 12, false, "Retrieval Reference Number"},
	38:  {0, 6, false, "Approval Code"},
	40:  {0, 3, false, "Service Code"},
	41:  {0, 8, false, "Card Acceptor Terminal ID"},
	42:  {0, 15, false, "Card Acceptor ID Code"},
	43:  {2, 99, false, "Card Acceptor Name/Location"},
	48:  {3, 999, false, "Additional Data"},
	49:  {0, 3, false, "Currency Code, Transaction"},
	50:  {0, 3, false, "Currency Code, Reconciliation"},
	51:  {0, 3, false, "Currency Code, Cardholder Billing"},
	54:  {3, 120, false, "Amounts, Additional"},
	55:  {3, 255, true, "ICC System Related Data"},
	62:  {3, 999, false, "Additional Data 2"},
	63:  {3, 999, false, "Transaction Life Cycle ID"},
	71:  {0, 8, false, "Message Number"},
	72:  {3, 999, false, "Data Record"},
	73:  {0, 6, false, "Date, Action"},
	93:  {2, 11, false, "Transaction Destination Institution ID"},
	94:  {2, 11, false, "Transaction Originator Institution ID"},
	95:  {2, 10, false, "Card Issuer Reference Data"},
	100: {2, 11, false, "Receiving Institution ID"},
	111: {3, 999, false, "Amount, Currency Conversion Assignment"},
	123: {3, 999, false, "Additional Data 3"},
	124: {3, 999, false, "Additional Data 4"},
	125: {3, 999, false, "Additional Data 5"},
	127: {3, 999, false, "Network Data"},
}

// bitmapBytes is the length of one bitmap: 64 bits, binary.
const bitmapBytes = 8

// newSpec returns the moov-io/iso8583 spec of IPM messages whose text is
// in cs. The lengths of LLVAR and LLLVAR fields are digits in the same
// code page.
func newSpec(cs *charset) *iso8583.MessageSpec {
	pre := prefix.ASCII
	if cs.ebcdic {
		pre = prefix.EBCDIC
	}
	fields := map[int]field.Field{
		0: field.NewString(&field.Spec{Length: 4, Description: "Message Type Indicator", Enc: cs, Pref: pre.Fixed}),
		1: field.NewBitmap(&field.Spec{Length: bitmapBytes, Description: "Bitmap", Enc: encoding.Binary, Pref: prefix.Binary.Fixed}),
	}
	for id, l := range ipmFields {
		var enc encoding.Encoder = cs
		if l.binary {
			enc = encoding.Binary
		}
		p := pre.Fixed
		switch l.lenDigits {
		case 2:
			p = pre.LL
		case 3:
			p = pre.LLL
		}
		fields[id] = field.NewString(&field.Spec{Length: l.length, Description: l.desc, Enc: enc, Pref: p})
	}
	return &iso8583.MessageSpec{Name: fmt.Sprintf("Mastercard IPM (%s)", cs.name), Fields: fields}
}
