package report

// The discrepancy classes. They are stable codes that finance filters on
// and that the JSON and CSV forms carry verbatim, so a code is never
// renamed; a new class is added to classTable.
const (
	ClassMissingInLedger         = "missing_in_ledger"
	ClassMissingInStatement      = "missing_in_statement"
	ClassAmountMismatch          = "amount_mismatch"
	ClassCurrencyMismatch        = "currency_mismatch"
	ClassDateOutOfWindow         = "date_out_of_window"
	ClassDuplicateInStatement    = "duplicate_in_statement"
	ClassUnbookedFee             = "unbooked_fee"
	ClassSettlementTotalMismatch = "settlement_total_mismatch"
	ClassAmbiguousSettlement     = "ambiguous_settlement"
	ClassSettled                 = "settled"
	ClassSettlementMember        = "settlement_member"
	ClassStatementUnbalanced     = "statement_unbalanced"
	ClassInTransit               = "in_transit"
	ClassReturned                = "returned"
	ClassCorrected               = "corrected"
	ClassMatched                 = "matched"
)

// Class describes one discrepancy class: its code, its name in words for
// readers of the report (shown with the code beside it), a one-line
// meaning, and whether an item in it needs a person.
type Class struct {
	Code    string
	Name    string
	Meaning string
	Break   bool
}

// classTable is the fixed order in which every form lists classes: the
// breaks first, the most dangerous (money the other side has and we lack)
// first, then the explained ones, so that what needs a person is read
// before what does not. It is the order reconciliation stores them in.
// docs/report.md repeats this table; a test keeps the two in step.
var classTable = []Class{
	{ClassMissingInLedger, "Missing in the ledger", "the statement has it and the ledger does not", true},
	{ClassMissingInStatement, "Missing on the statement", "the ledger has it, within the statement's dates, and the statement does not", true},
	{ClassAmountMismatch, "Amounts differ", "same reference and currency, amounts differ by more than the tolerance", true},
	{ClassCurrencyMismatch, "Currencies differ", "same reference, different currencies", true},
	{ClassDateOutOfWindow, "Dates too far apart", "same reference and amount, value dates further apart than the window", true},
	{ClassDuplicateInStatement, "Duplicate on the statement", "the statement lists the same item more than once", true},
	{ClassUnbookedFee, "Fee not booked", "a fee or charge on the statement that the ledger has not booked", true},
	{ClassSettlementTotalMismatch, "Settlement total differs", "a settlement total on the statement differs from the ledger items it settles", true},
	{ClassAmbiguousSettlement, "Ambiguous settlement", "a settlement total that more than one group of ledger items (batch, file, day) nets to", true},
	{ClassStatementUnbalanced, "Statement does not add up", "a bank statement's opening balance plus its booked entries is not its closing balance", true},
	{ClassInTransit, "In transit", "ledger posting dated after the statement's last date: timing, not a break", false},
	{ClassReturned, "Returned", "explained by a posted return or reversal", false},
	{ClassSettled, "Settled by a total", "settled by a settlement total on the statement: its batch, file or day nets to the total", false},
	{ClassSettlementMember, "Held by a settlement break", "in a batch, file, payout or day whose settlement total differs: that total's break holds it", false},
	{ClassCorrected, "Corrected", "resolved by an approved correction posting", false},
	{ClassMatched, "Matched", "ledger posting and statement line agree within the tolerance and the date window", false},
}

// classIndex maps a code to its position in classTable, which is also its
// sort order in every form.
var classIndex = func() map[string]int {
	m := make(map[string]int, len(classTable))
	for i, c := range classTable {
		m[c.Code] = i
	}
	return m
}()

// LookupClass returns the class with the given code, and false when the
// code is not one of the stable codes.
func LookupClass(code string) (Class, bool) {
	i, ok := classIndex[code]
	if !ok {
		return Class{}, false
	}
	return classTable[i], true
}

// KnownClasses returns every class in the order the report lists them. The
// slice is a copy; changing it changes nothing here.
func KnownClasses() []Class {
	return append([]Class(nil), classTable...)
}
