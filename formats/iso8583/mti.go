package iso8583

import (
	"fmt"

	"github.com/clearing-dev/clearing/formats"
)

// mti is a message type indicator that parseMTI accepted: four digits,
// version 0 (ISO 8583:1987), a class the reader handles, and a known
// function and origin.
type mti string

// The message classes (the second MTI digit) the reader handles.
const (
	classAuthorisation = '1'
	classFinancial     = '2'
	classReversal      = '4'
	classNetwork       = '8'
)

var classNames = map[byte]string{
	classAuthorisation: "authorisation",
	classFinancial:     "financial",
	classReversal:      "reversal",
	classNetwork:       "network management",
}

var functionNames = map[byte]string{
	'0': "request",
	'1': "response",
	'2': "advice",
	'3': "advice response",
}

// parseMTI accepts only what the reader knows how to treat. The 1993 and
// 2003 versions give the data elements other meanings (DE12, DE13 and DE15
// among them), and the other 1987 classes (file actions, reconciliation,
// administration, fee collection) are not handled, so all of them are
// refused rather than guessed at.
func parseMTI(s string) (mti, error) {
	if len(s) != 4 || !allDigits(s) {
		return "", fmt.Errorf("the MTI is not four digits")
	}
	if s[0] != '0' {
		return "", fmt.Errorf("MTI %s: only ISO 8583:1987 messages (MTI 0xxx) are supported", s)
	}
	if _, ok := classNames[s[1]]; !ok {
		return "", fmt.Errorf("MTI %s: message class %c is not one of authorisation (01xx), financial (02xx), reversal (04xx) or network management (08xx)", s, s[1])
	}
	if _, ok := functionNames[s[2]]; !ok {
		return "", fmt.Errorf("MTI %s: message function %c is not known", s, s[2])
	}
	if s[3] > '5' {
		return "", fmt.Errorf("MTI %s: message origin %c is not known", s, s[3])
	}
	return mti(s), nil
}

func (t mti) class() byte { return t[1] }

// response reports a response to a request or an advice (xx10, xx30).
func (t mti) response() bool { return t[2] == '1' || t[2] == '3' }

// repeat reports a repeat (0201, 0221, 0401, 0421, ...): an odd origin.
func (t mti) repeat() bool { return (t[3]-'0')%2 == 1 }

// folded is the message class of the key: the MTI with the repeat digit
// folded, so that a repeat has the key of the message it repeats.
func (t mti) folded() string {
	if t.repeat() {
		return string(t[:3]) + string(t[3]-1)
	}
	return string(t)
}

// describe names the message for a record's Detail: "0201 financial
// request (repeat)".
func (t mti) describe() string {
	s := string(t) + " " + classNames[t.class()] + " " + functionNames[t[2]]
	if t.repeat() {
		s += " (repeat)"
	}
	return s
}

// procCode is what the first two digits of a processing code (DE3) mean to
// the ledger.
type procCode struct {
	name string
	dir  formats.Direction
	// inquiry codes move no money: their messages are notices.
	inquiry bool
}

// processingCodes is the table of transaction types the reader accepts,
// from ISO 8583:1987. Direction is the side of the cardholder's account:
// purchases and cash debit it, refunds and credits credit it. Any other
// code fails closed. Inquiries carry Debit only because every record has a
// direction; they post nothing.
var processingCodes = map[string]procCode{
	"00": {name: "purchase", dir: formats.Debit},
	"01": {name: "cash withdrawal", dir: formats.Debit},
	"02": {name: "debit adjustment", dir: formats.Debit},
	"09": {name: "purchase with cashback", dir: formats.Debit},
	"20": {name: "refund", dir: formats.Credit},
	"21": {name: "deposit", dir: formats.Credit},
	"22": {name: "credit adjustment", dir: formats.Credit},
}

// lookupProcessingCode interprets a six-digit DE3. The whole 30-39 range is
// ISO 8583:1987's "inquiry services" (30 available funds, 31 balance, the
// rest reserved), so every code in it is an inquiry.
func lookupProcessingCode(code string) (procCode, error) {
	if len(code) != 6 || !allDigits(code) {
		return procCode{}, fmt.Errorf("the processing code is not six digits")
	}
	if code[0] == '3' {
		return procCode{name: "inquiry", dir: formats.Debit, inquiry: true}, nil
	}
	pc, ok := processingCodes[code[:2]]
	if !ok {
		return procCode{}, fmt.Errorf("transaction type %s (the first two digits of the processing code) is not one the reader knows how to post", code[:2])
	}
	return pc, nil
}
