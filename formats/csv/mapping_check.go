package csv

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/clearing-dev/clearing/internal/money"
)

// maxColumns bounds a "#N" position and the width of a header, so that a typo
// such as "#10000000" is a mapping error rather than an allocation.
const maxColumns = 4096

// defaultDateLayout is ISO 8601, the one date layout that no reader can take
// for another (01/02 could be January 2 or February 1).
const defaultDateLayout = "2006-01-02"

// colRef is one column reference in a mapping, with the key that made it.
type colRef struct {
	role string // mapping key, for messages: "amount", "key[2]"
	name string // header name; empty when by position
	pos  int    // 0-based position when by position; -1 when by name
}

func (c colRef) String() string {
	if c.pos >= 0 {
		return "#" + strconv.Itoa(c.pos+1)
	}
	return strconv.Quote(c.name)
}

// parseRef reads "#N" as a 1-based position and anything else as a name.
func parseRef(role, s string) (colRef, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return colRef{}, fmt.Errorf("%s names an empty column", role)
	}
	if digits, ok := strings.CutPrefix(s, "#"); ok && digits != "" && allDigits(digits) {
		n, err := strconv.Atoi(digits)
		if err != nil || n < 1 || n > maxColumns {
			return colRef{}, fmt.Errorf("%s: position %s is not between #1 and #%d", role, s, maxColumns)
		}
		return colRef{role: role, pos: n - 1}, nil
	}
	return colRef{role: role, name: s, pos: -1}, nil
}

// refs lists every column reference in the mapping, in a fixed order.
func (m *Mapping) refs() ([]colRef, []string) {
	var out []colRef
	var problems []string
	add := func(role, s string) {
		if s == "" {
			return
		}
		r, err := parseRef(role, s)
		if err != nil {
			problems = append(problems, err.Error())
			return
		}
		out = append(out, r)
	}
	for i, k := range m.Key {
		add(fmt.Sprintf("key[%d]", i+1), orPlaceholder(k))
	}
	add("reference", m.Reference)
	add("amount", m.Amount)
	add("debit", m.Debit)
	add("credit", m.Credit)
	add("direction", m.Direction)
	add("currency", m.Currency)
	add("value_date", m.ValueDate)
	for i, a := range m.Account {
		add(fmt.Sprintf("account[%d]", i+1), orPlaceholder(a))
	}
	add("skip_column", m.SkipColumn)
	for i, s := range m.Skip {
		add(fmt.Sprintf("skip[%d].column", i+1), orPlaceholder(s.Column))
	}
	add("type_column", m.TypeColumn)
	add("settlement_group", m.SettlementGroup)
	return out, problems
}

// orPlaceholder turns an empty list element into a value that parseRef
// rejects by name, so that `key = ["id", ""]` is an error, not a shorter key.
func orPlaceholder(s string) string {
	if strings.TrimSpace(s) == "" {
		return " "
	}
	return s
}

// Validate reports every problem that can be found without the file's
// header, wrapped in ErrMapping. NewReader calls it, so a Mapping built in
// code is held to the same rules as one read from a file.
func (m *Mapping) Validate() error {
	var p []string
	p = append(p, m.checkSource()...)
	p = append(p, m.checkLayout()...)
	p = append(p, m.checkAmount()...)
	p = append(p, m.checkCurrencyAndDate()...)
	p = append(p, m.checkLists()...)
	_, refProblems := m.refs()
	p = append(p, refProblems...)
	if len(p) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrMapping, strings.Join(p, "; "))
}

func (m *Mapping) checkSource() []string {
	if m.Source == "" {
		return []string{"source is required; it is part of every key"}
	}
	if len(m.Source) > 64 || !isSourceName(m.Source) {
		return []string{fmt.Sprintf("source %q must be 1 to 64 letters, digits, '.', '_' or '-', so that keys stay unambiguous", m.Source)}
	}
	return nil
}

func isSourceName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return false
		}
	}
	return true
}

func (m *Mapping) checkLayout() []string {
	var p []string
	if m.Delimiter != "" {
		if _, err := delimiterByte(m.Delimiter); err != nil {
			p = append(p, err.Error())
		}
	}
	if m.HasHeader() && len(m.Columns) > 0 {
		p = append(p, "columns names the columns of a file without a header; set header = false or remove columns")
	}
	if !m.HasHeader() {
		p = append(p, m.checkPositional()...)
	}
	if m.SkipLines < 0 || m.SkipLines > 1000 {
		p = append(p, fmt.Sprintf("skip_lines = %d is not between 0 and 1000", m.SkipLines))
	}
	if len(m.Key) == 0 && m.Reference == "" {
		p = append(p, "name a reference column (what reconciliation matches on) or key columns")
	}
	return p
}

// checkPositional checks a mapping for a file without a header: every name it
// uses must be one of columns.
func (m *Mapping) checkPositional() []string {
	var p []string
	if len(m.Columns) > maxColumns {
		return []string{fmt.Sprintf("columns has more than %d entries", maxColumns)}
	}
	seen := map[string]bool{}
	for _, c := range m.Columns {
		c = strings.TrimSpace(c)
		if c != "" && seen[c] {
			p = append(p, fmt.Sprintf("columns names %q twice", c))
		}
		seen[c] = true
	}
	refs, _ := m.refs()
	for _, r := range refs {
		if r.pos >= 0 {
			if len(m.Columns) > 0 && r.pos >= len(m.Columns) {
				p = append(p, fmt.Sprintf("%s = %s is past the %d columns that columns lists", r.role, r, len(m.Columns)))
			}
			continue
		}
		if len(m.Columns) == 0 {
			p = append(p, fmt.Sprintf("%s = %s: a file without a header has no column names; use a position such as \"#3\" or list the names in columns", r.role, r))
		} else if !seen[r.name] {
			p = append(p, fmt.Sprintf("%s = %s is not one of columns", r.role, r))
		}
	}
	return p
}

// delimiterByte accepts one ASCII punctuation character or a tab. Letters,
// digits, spaces, quotes and line ends would make every row ambiguous.
func delimiterByte(s string) (byte, error) {
	if len(s) != 1 {
		return 0, fmt.Errorf("delimiter %q must be a single ASCII character such as \",\", \";\", \"|\" or \"\\t\"", s)
	}
	c := s[0]
	punct := c > ' ' && c < 0x7f && !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z')
	if c == '"' || !(punct || c == '\t') {
		return 0, fmt.Errorf("delimiter %q cannot be a quote, a letter, a digit, a space or a line end", s)
	}
	return c, nil
}

func (m *Mapping) checkAmount() []string {
	var p []string
	signed, split, directed := m.Amount != "" && m.Direction == "", m.Debit != "" || m.Credit != "", m.Direction != ""
	switch {
	case split && (m.Amount != "" || directed):
		p = append(p, "use either debit and credit, or amount (with or without direction), not both")
	case split && (m.Debit == "" || m.Credit == ""):
		p = append(p, "debit and credit go together; name both columns")
	case directed && m.Amount == "":
		p = append(p, "direction needs an amount column holding the unsigned amount")
	case !signed && !split && !directed:
		p = append(p, "name the amount: amount, or debit and credit, or amount with direction")
	}
	if directed {
		p = append(p, checkValueLists("direction", map[string][]string{"debit_values": m.DebitValues, "credit_values": m.CreditValues}, true)...)
	} else if len(m.DebitValues)+len(m.CreditValues) > 0 {
		p = append(p, "debit_values and credit_values need a direction column")
	}
	if m.Positive != "" && (m.Positive != "credit" && m.Positive != "debit" || !signed) {
		p = append(p, fmt.Sprintf("positive = %q: only a signed amount column takes positive, and it is \"credit\" or \"debit\"", m.Positive))
	}
	if m.AmountUnit != "major" && m.AmountUnit != "minor" {
		p = append(p, fmt.Sprintf("amount_unit = %q: it is required and is \"major\" (12.34) or \"minor\" (1234)", m.AmountUnit))
	}
	if _, err := newAmountFormat(m.AmountUnit, m.Thousands, m.Decimal); err != nil {
		p = append(p, err.Error())
	}
	return p
}

// checkValueLists checks the value lists that go with one column: each
// needed list is present (when required), and no value is in two lists.
func checkValueLists(column string, lists map[string][]string, required bool) []string {
	var p []string
	owner := map[string]string{}
	for _, name := range []string{"debit_values", "credit_values", "payment_values", "fee_values", "return_values", "settlement_values"} {
		values, ok := lists[name]
		if !ok {
			continue
		}
		if required && len(values) == 0 {
			p = append(p, fmt.Sprintf("%s needs %s", column, name))
		}
		for _, v := range values {
			v = strings.TrimSpace(v)
			if prev, dup := owner[v]; dup && prev != name {
				p = append(p, fmt.Sprintf("value %q is in both %s and %s", v, prev, name))
			}
			owner[v] = name
		}
	}
	return p
}

func (m *Mapping) checkCurrencyAndDate() []string {
	var p []string
	switch {
	case m.Currency != "" && m.CurrencyFixed != "":
		p = append(p, "use either currency (a column) or currency_fixed (a code), not both")
	case m.Currency == "" && m.CurrencyFixed == "":
		p = append(p, "name the currency: a currency column or currency_fixed")
	case m.CurrencyFixed != "":
		if _, err := money.LookupCurrency(m.CurrencyFixed); err != nil {
			p = append(p, fmt.Sprintf("currency_fixed: %v", err))
		}
	}
	if m.ValueDate == "" {
		p = append(p, "value_date is required")
	}
	if err := checkDateLayout(m.layout()); err != nil {
		p = append(p, err.Error())
	}
	return p
}

func (m *Mapping) layout() string {
	if m.DateLayout == "" {
		return defaultDateLayout
	}
	return m.DateLayout
}

// checkDateLayout formats a date with the layout and parses it back: a layout
// that loses the year, month or day cannot give a value date.
func checkDateLayout(layout string) error {
	ref := time.Date(2034, time.November, 29, 13, 14, 15, 0, time.UTC)
	back, err := time.Parse(layout, ref.Format(layout))
	if err != nil || back.Year() != ref.Year() || back.Month() != ref.Month() || back.Day() != ref.Day() {
		return fmt.Errorf("date_layout %q does not hold a full date; write it as Go's reference date, such as \"2006-01-02\" or \"02/01/2006\"", layout)
	}
	return nil
}

func (m *Mapping) checkLists() []string {
	var p []string
	for i, k := range m.Key {
		for _, k2 := range m.Key[:i] {
			if strings.TrimSpace(k) == strings.TrimSpace(k2) {
				p = append(p, fmt.Sprintf("key names %q twice", k))
			}
		}
	}
	if (m.SkipColumn == "") != (len(m.SkipValues) == 0) {
		p = append(p, "skip_column and skip_values go together")
	}
	for i, s := range m.Skip {
		if len(s.Values) == 0 {
			p = append(p, fmt.Sprintf("skip[%d] needs values", i+1))
		}
	}
	typed := map[string][]string{"payment_values": m.PaymentValues, "fee_values": m.FeeValues, "return_values": m.ReturnValues, "settlement_values": m.SettlementValues}
	if m.TypeColumn != "" {
		p = append(p, checkValueLists("type_column", typed, false)...)
		if len(m.PaymentValues)+len(m.FeeValues)+len(m.ReturnValues)+len(m.SettlementValues) == 0 {
			p = append(p, "type_column needs at least one of payment_values, fee_values, return_values and settlement_values")
		}
	} else if len(m.PaymentValues)+len(m.FeeValues)+len(m.ReturnValues)+len(m.SettlementValues) > 0 {
		p = append(p, "payment_values, fee_values, return_values and settlement_values need a type_column")
	}
	return p
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
