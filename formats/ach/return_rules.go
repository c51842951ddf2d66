package ach

import (
	"regexp"

	moov "github.com/moov-io/ach"
)

// ReturnRule is what a return reason code requires of the originator, from
// the Nacha Operating Rules: whether the entry may be presented again, and
// how often; whether the account must no longer be debited; whether the
// receiver said the debit was not authorized; and the time frame within
// which the RDFI may return it. Reason is moov-io/ach's name for the code.
type ReturnRule struct {
	Code         string `json:"code"`
	Reason       string `json:"reason"`
	Represent    int    `json:"may_represent"` // times the entry may be presented again; 0: never
	StopDebits   bool   `json:"stop_debits"`
	Unauthorized bool   `json:"unauthorized"`
	TimeFrame    string `json:"time_frame"`
}

// The return time frames.
const (
	TwoBankingDays   = "2 banking days"
	FiveBankingDays  = "5 banking days"
	SixtyCalendar    = "60 calendar days"
	ByAgreement      = "as agreed with the ODFI"
	DeathNotReturned = "the date of death, for government benefit payments"
)

// returnRules pins what the Nacha rules say of the codes that require more
// than the default (no re-presentment, the account may be debited again,
// 2 banking days). A test holds every code moov-io/ach knows to this table.
var returnRules = map[string]ReturnRule{
	"R01": {Represent: 2},     // insufficient funds: twice more, within 180 days
	"R09": {Represent: 2},     // uncollected funds
	"R02": {StopDebits: true}, // account closed
	"R03": {StopDebits: true}, // no account, unable to locate
	"R04": {StopDebits: true}, // invalid account number
	"R05": {StopDebits: true, Unauthorized: true, TimeFrame: SixtyCalendar},
	"R07": {StopDebits: true, Unauthorized: true, TimeFrame: SixtyCalendar}, // authorization revoked
	"R08": {StopDebits: true},                                               // payment stopped
	"R10": {StopDebits: true, Unauthorized: true, TimeFrame: SixtyCalendar},
	"R11": {Unauthorized: true, TimeFrame: SixtyCalendar}, // not in accordance with the authorization: may be corrected
	"R14": {StopDebits: true, TimeFrame: DeathNotReturned},
	"R15": {StopDebits: true, TimeFrame: DeathNotReturned},
	"R16": {StopDebits: true},                     // account frozen, or returned per OFAC
	"R20": {StopDebits: true},                     // non-transaction account
	"R29": {StopDebits: true, Unauthorized: true}, // corporate customer advises not authorized
	"R31": {TimeFrame: ByAgreement},               // permissible return entry (CCD, CTX)
	"R37": {Unauthorized: true, TimeFrame: SixtyCalendar},
	"R51": {Unauthorized: true, TimeFrame: SixtyCalendar},
	"R53": {Unauthorized: true, TimeFrame: SixtyCalendar},
	// Dishonored returns (the ODFI refuses a return) and contested
	// dishonored returns (the RDFI answers the refusal).
	"R61": {TimeFrame: FiveBankingDays}, "R62": {TimeFrame: FiveBankingDays}, "R67": {TimeFrame: FiveBankingDays},
	"R68": {TimeFrame: FiveBankingDays}, "R69": {TimeFrame: FiveBankingDays}, "R70": {TimeFrame: FiveBankingDays},
}

// ReturnRuleOf returns the rule of a return reason code, and false for a
// code that neither moov-io/ach nor the Nacha rules know.
func ReturnRuleOf(code string) (ReturnRule, bool) {
	rc := moov.LookupReturnCode(code)
	if rc == nil {
		return ReturnRule{}, false
	}
	r := returnRules[rc.Code]
	r.Code, r.Reason = rc.Code, rc.Reason
	if r.TimeFrame == "" {
		r.TimeFrame = TwoBankingDays
	}
	return r, true
}

// ChangeRule is what a notification of change (NOC) asks the originator to
// correct before the next entry.
type ChangeRule struct {
	Code   string `json:"code"`
	Reason string `json:"reason"` // moov-io/ach's name of what is corrected
}

// ChangeRuleOf returns the rule of a change code (C01-C14), and false for a
// code moov-io/ach does not know.
func ChangeRuleOf(code string) (ChangeRule, bool) {
	cc := moov.LookupChangeCode(code)
	if cc == nil {
		return ChangeRule{}, false
	}
	return ChangeRule{Code: cc.Code, Reason: cc.Reason}, true
}

// reasonCode finds the return or change code in a record's Detail, as the
// reader writes it ("return R01", "dishonored return R69", "NOC C01").
var reasonCode = regexp.MustCompile(`\b([RC][0-9]{2})\b`)

// CodeOf returns the reason code named in a Detail the reader wrote, or "".
func CodeOf(detail string) string {
	m := reasonCode.FindStringSubmatch(detail)
	if m == nil {
		return ""
	}
	return m[1]
}
