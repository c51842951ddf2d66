package csv

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/money"
)

// plan is a mapping resolved against one file's columns: every column it
// names turned into a position.
type plan struct {
	labels []string // each column's name for messages: its header or "#N"
	// width is the number of columns the header (or columns) lists; 0 for
	// a file without header or columns until its first row sets it.
	width    int
	minWidth int // fewest fields a row may have
	need     int // highest referenced position + 1

	key                                        []int
	reference                                  int // -1: the key values
	amount, debit, credit, direction, currency int // -1: not used
	valueDate, typeColumn, group               int
	account                                    []int
	skips                                      []skipAt
	amountFormat                               amountFormat
	fixedCurrency                              money.Currency
	currencies                                 map[string]money.Currency // codes found so far
	debitValues, creditValues                  map[string]bool
	lineTypes                                  map[string]formats.LineType
	strictTypes, positiveDebit                 bool
}

// skipAt is a SkipRule with its column resolved.
type skipAt struct {
	column int
	values map[string]bool
}

// label names column i for an error message.
func (p *plan) label(i int) string {
	if i < 0 {
		return ""
	}
	if i < len(p.labels) && p.labels[i] != "" {
		return p.labels[i]
	}
	return "#" + strconv.Itoa(i+1)
}

// resolveHeader resolves the mapping against a header row. It fails, naming
// every column the header lacks and listing those it has, or naming the
// header's duplicate names when the mapping addresses columns by name.
func resolveHeader(m *Mapping, header row) (*plan, error) {
	if len(header.fields) > maxColumns {
		return nil, fmt.Errorf("%w: header (line %d) has %d columns, more than %d", ErrMapping, header.line, len(header.fields), maxColumns)
	}
	names := make([]string, len(header.fields))
	at := map[string][]int{}
	for i, f := range header.fields {
		names[i] = strings.TrimSpace(f)
		if names[i] != "" {
			at[names[i]] = append(at[names[i]], i)
		}
	}
	refs, _ := m.refs()
	if dups := duplicates(at); len(dups) > 0 && usesNames(refs) {
		return nil, fmt.Errorf("%w: header (line %d) has %s; rename them or address every column by position (\"#3\")", ErrDuplicateColumn, header.line, strings.Join(dups, ", "))
	}
	var missing []string
	index := map[string]int{}
	for _, r := range refs {
		switch {
		case r.pos >= len(names):
			missing = append(missing, fmt.Sprintf("%s (%s; the header has %d columns)", r, r.role, len(names)))
		case r.pos >= 0:
		case len(at[r.name]) == 0:
			missing = append(missing, fmt.Sprintf("%s (%s)", r, r.role))
		default:
			index[r.name] = at[r.name][0]
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: %s; the header (line %d) has %s", ErrMissingColumn, strings.Join(missing, ", "), header.line, quoteList(names))
	}
	return newPlan(m, names, index), nil
}

// resolvePositional resolves a mapping for a file without a header.
func resolvePositional(m *Mapping) (*plan, error) {
	index := map[string]int{}
	for i, c := range m.Columns {
		if c = strings.TrimSpace(c); c != "" {
			index[c] = i
		}
	}
	names := make([]string, len(m.Columns))
	for i, c := range m.Columns {
		names[i] = strings.TrimSpace(c)
	}
	return newPlan(m, names, index), nil
}

func duplicates(at map[string][]int) []string {
	var out []string
	for name, cols := range at {
		if len(cols) > 1 {
			pos := make([]string, len(cols))
			for i, c := range cols {
				pos[i] = "#" + strconv.Itoa(c+1)
			}
			out = append(out, fmt.Sprintf("%q at %s", name, strings.Join(pos, " and ")))
		}
	}
	sort.Strings(out)
	return out
}

func usesNames(refs []colRef) bool {
	for _, r := range refs {
		if r.pos < 0 {
			return true
		}
	}
	return false
}

// quoteList quotes at most 40 names, enough to recognise any real header.
func quoteList(names []string) string {
	const most = 40
	var b strings.Builder
	for i, n := range names {
		if i == most {
			fmt.Fprintf(&b, " and %d more", len(names)-most)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(n))
	}
	return b.String()
}

// newPlan turns every column the mapping names into a position, by index for
// names (already checked to exist) and directly for "#N".
func newPlan(m *Mapping, labels []string, index map[string]int) *plan {
	// The row width is the number of labels, and a row may omit trailing
	// columns without a name; with no labels the first row sets both.
	p := &plan{labels: labels, reference: -1, width: len(labels), minWidth: len(labels), currencies: map[string]money.Currency{}}
	for p.minWidth > 0 && labels[p.minWidth-1] == "" {
		p.minWidth--
	}
	col := func(s string) int {
		if s == "" {
			return -1
		}
		r, _ := parseRef("", s)
		i := r.pos
		if i < 0 {
			i = index[r.name]
		}
		p.need = max(p.need, i+1)
		return i
	}
	for _, k := range m.Key {
		p.key = append(p.key, col(k))
	}
	for _, a := range m.Account {
		p.account = append(p.account, col(a))
	}
	p.reference, p.amount, p.debit, p.credit = col(m.Reference), col(m.Amount), col(m.Debit), col(m.Credit)
	p.direction, p.currency, p.valueDate, p.typeColumn = col(m.Direction), col(m.Currency), col(m.ValueDate), col(m.TypeColumn)
	p.group = col(m.SettlementGroup)
	if m.SkipColumn != "" {
		p.skips = append(p.skips, skipAt{col(m.SkipColumn), valueSet(m.SkipValues)})
	}
	for _, s := range m.Skip {
		p.skips = append(p.skips, skipAt{col(s.Column), valueSet(s.Values)})
	}
	p.amountFormat, _ = newAmountFormat(m.AmountUnit, m.Thousands, m.Decimal)
	if m.CurrencyFixed != "" {
		p.fixedCurrency, _ = money.LookupCurrency(m.CurrencyFixed)
	}
	p.debitValues, p.creditValues = valueSet(m.DebitValues), valueSet(m.CreditValues)
	p.positiveDebit = m.Positive == "debit"
	p.lineTypes = map[string]formats.LineType{}
	for lt, values := range map[formats.LineType][]string{formats.Payment: m.PaymentValues, formats.Fee: m.FeeValues, formats.ReturnLine: m.ReturnValues, formats.SettlementTotal: m.SettlementValues} {
		for _, v := range values {
			p.lineTypes[strings.TrimSpace(v)] = lt
		}
	}
	p.strictTypes = len(m.PaymentValues) > 0
	p.minWidth = max(p.minWidth, p.need)
	return p
}

func valueSet(values []string) map[string]bool {
	set := make(map[string]bool, len(values))
	for _, v := range values {
		set[strings.TrimSpace(v)] = true
	}
	return set
}
