package csv

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// PresetPrefix introduces a preset name where a mapping path is expected, as
// in `--map preset:signed-amount`.
const PresetPrefix = "preset:"

// maxMappingBytes bounds a mapping file. Real mappings are a few hundred
// bytes; the bound keeps a wrong path (a multi-gigabyte export passed as the
// mapping) from being read into memory.
const maxMappingBytes = 1 << 20

// Mapping says how the columns of one CSV export become Records. Its TOML keys
// are a public contract that users and statement import rely on; each field's
// tag is its key. A column is named by its header text or, as "#N", by its
// 1-based position. An empty string or list means the key is absent.
type Mapping struct {
	// Preset names a shipped preset whose keys this file starts from; the
	// file's own keys replace the preset's. A file that names a preset must
	// name its own source.
	Preset string `toml:"preset"`
	// Source is part of every key; letters, digits, '.', '_' and '-'.
	Source string `toml:"source"`
	// Delimiter is one ASCII character; auto-detected when empty.
	Delimiter string `toml:"delimiter"`
	// Header says whether the first row names the columns; nil means true.
	Header *bool `toml:"header"`
	// Columns names the columns of a file without a header row, in order,
	// so that the mapping can refer to them by name.
	Columns []string `toml:"columns"`
	// SkipLines is the number of physical lines before the header (or the
	// first row), such as a report title, that are not part of the table.
	SkipLines int `toml:"skip_lines"`
	// Key lists the natural key columns; without them the key is the file id
	// and line.
	Key Columns `toml:"key"`
	// Reference is the column that reconciliation matches on; without it the
	// key values are the reference.
	Reference string `toml:"reference"`
	// Amount is a signed amount column, or the unsigned amount when Direction
	// is set.
	Amount string `toml:"amount"`
	// Debit and Credit are separate unsigned amount columns.
	Debit  string `toml:"debit"`
	Credit string `toml:"credit"`
	// Direction is a column whose value says whether Amount is a debit or a
	// credit, by DebitValues and CreditValues.
	Direction    string   `toml:"direction"`
	DebitValues  []string `toml:"debit_values"`
	CreditValues []string `toml:"credit_values"`
	// Positive is the direction of a positive signed amount: "credit" (the
	// default) or "debit".
	Positive string `toml:"positive"`
	// AmountUnit is "major" ("12.34") or "minor" ("1234"); required.
	AmountUnit string `toml:"amount_unit"`
	// Thousands and Decimal are the separators the export uses; by default
	// there is no thousands separator and the decimal separator is ".".
	Thousands string `toml:"thousands"`
	Decimal   string `toml:"decimal"`
	// Currency is the currency column; CurrencyFixed is a code used for
	// every row instead. Exactly one is required.
	Currency      string `toml:"currency"`
	CurrencyFixed string `toml:"currency_fixed"`
	// ValueDate is the value date column, read with DateLayout (a Go
	// reference layout, "2006-01-02" by default).
	ValueDate  string `toml:"value_date"`
	DateLayout string `toml:"date_layout"`
	// Account lists the counterparty account columns, hashed together.
	Account Columns `toml:"account"`
	// SkipColumn and SkipValues drop rows, such as subtotals, that are not
	// records; Skip adds further rules of the same kind.
	SkipColumn string     `toml:"skip_column"`
	SkipValues []string   `toml:"skip_values"`
	Skip       []SkipRule `toml:"skip"`
	// TypeColumn and the *Values lists set Record.LineType for statement
	// import.
	TypeColumn       string   `toml:"type_column"`
	PaymentValues    []string `toml:"payment_values"`
	FeeValues        []string `toml:"fee_values"`
	ReturnValues     []string `toml:"return_values"`
	SettlementValues []string `toml:"settlement_values"`
	// SettlementGroup is the column that names the payout or batch a row
	// is settled in. Reconciliation matches a settlement total that names a
	// group (the other side's file mapped the same way) with the net of
	// the ledger items of that group.
	SettlementGroup string `toml:"settlement_group"`
}

// SkipRule drops every row whose Column holds one of Values (compared after
// trimming spaces; "" matches an empty cell).
type SkipRule struct {
	Column string   `toml:"column"`
	Values []string `toml:"values"`
}

// Columns is a list of column references that a mapping file may also write
// as a single string: account = "iban" is account = ["iban"].
type Columns []string

// UnmarshalTOML accepts a string or an array of strings.
func (c *Columns) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case string:
		*c = Columns{v}
	case []any:
		out := make(Columns, 0, len(v))
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return fmt.Errorf("expected a column name, found %T", e)
			}
			out = append(out, s)
		}
		*c = out
	default:
		return fmt.Errorf("expected a column name or a list of them, found %T", v)
	}
	return nil
}

// HasHeader reports whether the file's first row names its columns.
func (m *Mapping) HasHeader() bool { return m.Header == nil || *m.Header }

// LoadMapping reads a mapping file, or a shipped preset when path is
// "preset:NAME" (see Presets).
func LoadMapping(path string) (*Mapping, error) {
	if name, ok := strings.CutPrefix(path, PresetPrefix); ok {
		return presetMapping(name)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("csv: mapping: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxMappingBytes+1))
	if err != nil {
		return nil, fmt.Errorf("csv: mapping %s: %w", path, err)
	}
	m, err := ParseMapping(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// ParseMapping decodes and validates a mapping file. Unknown keys, keys in
// another letter case and contradicting keys are errors wrapping ErrMapping;
// so is any problem that can be found without the file's header.
func ParseMapping(data []byte) (*Mapping, error) {
	m, md, err := decodeMapping(data)
	if err != nil {
		return nil, err
	}
	if m.Preset != "" {
		if !md.IsDefined("source") {
			return nil, fmt.Errorf("%w: a mapping that starts from preset %q must name its own source, which is part of every key", ErrMapping, m.Preset)
		}
		base, err := presetMapping(m.Preset)
		if err != nil {
			return nil, err
		}
		overlay(base, m, md)
		base.Preset = m.Preset
		m = base
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

func decodeMapping(data []byte) (*Mapping, toml.MetaData, error) {
	if len(data) > maxMappingBytes {
		return nil, toml.MetaData{}, fmt.Errorf("%w: larger than %d bytes; is this really a mapping file?", ErrMapping, maxMappingBytes)
	}
	data = bytes.TrimPrefix(data, utf8BOM)
	var m Mapping
	md, err := toml.Decode(string(data), &m)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, md, fmt.Errorf("%w: line %d: %s", ErrMapping, pe.Position.Line, pe.Message)
		}
		return nil, md, fmt.Errorf("%w: %s", ErrMapping, err)
	}
	if err := checkKeys(md); err != nil {
		return nil, md, err
	}
	return &m, md, nil
}

// mappingKeys lists the top-level keys that Mapping decodes, from its tags.
var mappingKeys = func() []string {
	t := reflect.TypeFor[Mapping]()
	keys := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		keys = append(keys, t.Field(i).Tag.Get("toml"))
	}
	return keys
}()

var skipRuleKeys = []string{"column", "values"}

// checkKeys rejects every key that Mapping does not have, spelled exactly.
// The TOML decoder alone is not enough: it matches field names without regard
// to letter case, so "Amount" and "amount" in one file would both land in one
// field, the last one read (in map order) winning.
func checkKeys(md toml.MetaData) error {
	var unknown []string
	reported := map[string]bool{} // keys reported, so that their children are not
	report := func(k toml.Key, last string, known []string) {
		for i := 1; i < len(k); i++ {
			if reported[k[:i].String()] {
				return
			}
		}
		reported[k.String()] = true
		unknown = append(unknown, describeUnknown(k.String(), last, known))
	}
	for _, k := range md.Keys() {
		switch {
		case !slices.Contains(mappingKeys, k[0]):
			report(k, k[0], mappingKeys)
		case k[0] == "skip" && len(k) > 1 && !slices.Contains(skipRuleKeys, k[1]):
			report(k, k[1], skipRuleKeys)
		}
	}
	for _, k := range md.Undecoded() {
		if !reported[k.String()] {
			report(k, k[len(k)-1], nil)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	return fmt.Errorf("%w: unknown key %s", ErrMapping, strings.Join(unknown, ", "))
}

// describeUnknown quotes an unknown key and, when a known key is within two
// edits of it, suggests that one.
func describeUnknown(full, last string, known []string) string {
	best, bestDist := "", 3
	for _, k := range known {
		if d := editDistance(strings.ToLower(last), k); d < bestDist {
			best, bestDist = k, d
		}
	}
	if best == "" {
		return fmt.Sprintf("%q", full)
	}
	return fmt.Sprintf("%q (did you mean %q?)", full, best)
}

// editDistance is the Levenshtein distance between two short strings.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// overlay copies into base every field that the file (described by md)
// defines, so that a file extending a preset replaces exactly the keys it
// writes and inherits the rest.
func overlay(base, file *Mapping, md toml.MetaData) {
	bv, fv := reflect.ValueOf(base).Elem(), reflect.ValueOf(file).Elem()
	t := bv.Type()
	for i := range t.NumField() {
		if md.IsDefined(t.Field(i).Tag.Get("toml")) {
			bv.Field(i).Set(fv.Field(i))
		}
	}
}
