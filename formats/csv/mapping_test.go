package csv

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// contractMapping is the mapping from the public contract, verbatim.
const contractMapping = `
source = "acme-psp"            # required; part of every key
delimiter = ","                # optional; auto-detected when absent
key = ["id"]                   # optional; natural key columns
reference = "id"               # column used for matching in reconciliation
amount = "amount"              # one signed column ...
# debit = "debit"              # ... or separate debit and credit columns
# credit = "credit"
# direction = "type"           # ... or an unsigned amount and a direction column
# debit_values = ["charge"]
# credit_values = ["refund"]
amount_unit = "major"          # "major" ("12.34") or "minor" ("1234")
currency = "currency"          # a column; or currency_fixed = "USD"
value_date = "settled_on"
date_layout = "2006-01-02"     # Go reference layout
account = "merchant_id"        # counterparty account column (stored as an HMAC plus its last 4)
skip_column = "type"           # rows whose skip_column value is in skip_values are not records
skip_values = ["subtotal"]
`

func TestParseMappingContract(t *testing.T) {
	m, err := ParseMapping([]byte(contractMapping))
	if err != nil {
		t.Fatal(err)
	}
	want := Mapping{
		Source: "acme-psp", Delimiter: ",", Key: Columns{"id"}, Reference: "id", Amount: "amount",
		AmountUnit: "major", Currency: "currency", ValueDate: "settled_on", DateLayout: "2006-01-02",
		Account: Columns{"merchant_id"}, SkipColumn: "type", SkipValues: []string{"subtotal"},
	}
	if !reflect.DeepEqual(*m, want) {
		t.Fatalf("got  %+v\nwant %+v", *m, want)
	}
}

func TestParseMappingContractAlternatives(t *testing.T) {
	base := "source = \"s\"\nreference = \"id\"\namount_unit = \"major\"\nvalue_date = \"d\"\n"
	cases := []struct {
		name  string
		extra string
		check func(*Mapping) bool
	}{
		{"debit and credit", "debit = \"debit\"\ncredit = \"credit\"\ncurrency = \"c\"\n", func(m *Mapping) bool { return m.Debit == "debit" && m.Credit == "credit" }},
		{"direction", "direction = \"type\"\namount = \"a\"\ndebit_values = [\"charge\"]\ncredit_values = [\"refund\"]\ncurrency_fixed = \"USD\"\n", func(m *Mapping) bool {
			return m.Direction == "type" && m.DebitValues[0] == "charge" && m.CreditValues[0] == "refund"
		}},
		{"account list", "amount = \"a\"\ncurrency = \"c\"\naccount = [\"bank_code\", \"account_no\"]\n", func(m *Mapping) bool {
			return reflect.DeepEqual(m.Account, Columns{"bank_code", "account_no"})
		}},
		{"key string", "amount = \"a\"\ncurrency = \"c\"\nkey = \"id\"\n", func(m *Mapping) bool { return reflect.DeepEqual(m.Key, Columns{"id"}) }},
		{"skip tables", "amount = \"a\"\ncurrency = \"c\"\n[[skip]]\ncolumn = \"status\"\nvalues = [\"Pending\"]\n", func(m *Mapping) bool {
			return len(m.Skip) == 1 && m.Skip[0].Column == "status"
		}},
		{"statement line types", "amount = \"a\"\ncurrency = \"c\"\ntype_column = \"kind\"\nfee_values = [\"fee\"]\nreturn_values = [\"chargeback\"]\nsettlement_values = [\"payout\"]\n", func(m *Mapping) bool {
			return m.TypeColumn == "kind" && m.FeeValues[0] == "fee"
		}},
		{"positional", "header = false\namount = \"#4\"\ncurrency = \"#5\"\n", func(m *Mapping) bool { return !m.HasHeader() }},
		{"positional with names", "header = false\ncolumns = [\"id\", \"d\", \"a\", \"c\"]\namount = \"a\"\ncurrency = \"c\"\n", func(m *Mapping) bool { return len(m.Columns) == 4 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := base + tc.extra
			if tc.name == "positional" {
				in = strings.ReplaceAll(in, `"id"`, `"#1"`)
				in = strings.ReplaceAll(in, `"d"`, `"#2"`)
			}
			m, err := ParseMapping([]byte(in))
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(m) {
				t.Fatalf("decoded %+v", m)
			}
		})
	}
}

func TestParseMappingErrors(t *testing.T) {
	valid := "source = \"s\"\nreference = \"id\"\namount = \"a\"\namount_unit = \"major\"\ncurrency = \"c\"\nvalue_date = \"d\"\n"
	cases := []struct {
		name string
		in   string
		want string // a part of the message
	}{
		{"unknown key", valid + "ammount = \"x\"\n", `unknown key "ammount" (did you mean "amount"?)`},
		{"other letter case", valid + "Amount = \"x\"\n", `unknown key "Amount" (did you mean "amount"?)`},
		{"unknown skip key", valid + "[[skip]]\ncolum = \"x\"\nvalues = [\"y\"]\n", `unknown key "skip.colum" (did you mean "column"?)`},
		{"unknown table", valid + "[extra]\nx = 1\n", `unknown key "extra"`},
		{"syntax", "source = \n", "line 1"},
		{"wrong type", valid + "skip_lines = \"two\"\n", "skip_lines"},
		{"no source", strings.Replace(valid, `source = "s"`, "", 1), "source is required"},
		{"source with colon", strings.Replace(valid, `"s"`, `"a:b"`, 1), `source "a:b" must be`},
		{"no amount unit", strings.Replace(valid, `amount_unit = "major"`, "", 1), "amount_unit"},
		{"amount and debit", valid + "debit = \"d1\"\ncredit = \"c1\"\n", "either debit and credit, or amount"},
		{"debit alone", strings.Replace(valid, `amount = "a"`, `debit = "d1"`, 1), "debit and credit go together"},
		{"no amount", strings.Replace(valid, `amount = "a"`, "", 1), "name the amount"},
		{"direction without values", valid + "direction = \"t\"\n", "direction needs debit_values"},
		{"value in both lists", valid + "direction = \"t\"\ndebit_values = [\"x\"]\ncredit_values = [\"x\"]\n", `value "x" is in both debit_values and credit_values`},
		{"values without direction", valid + "debit_values = [\"x\"]\n", "need a direction column"},
		{"two currencies", valid + "currency_fixed = \"USD\"\n", "either currency"},
		{"unknown fixed currency", strings.Replace(valid, `currency = "c"`, `currency_fixed = "XYZ"`, 1), "currency_fixed"},
		{"no value date", strings.Replace(valid, `value_date = "d"`, "", 1), "value_date is required"},
		{"layout without day", valid + "date_layout = \"2006-01\"\n", "does not hold a full date"},
		{"no reference nor key", strings.Replace(valid, `reference = "id"`, "", 1), "name a reference column"},
		{"bad delimiter", valid + "delimiter = \"ab\"\n", "single ASCII character"},
		{"letter delimiter", valid + "delimiter = \"x\"\n", "cannot be a quote"},
		{"empty key column", valid + "key = [\"id\", \"\"]\n", "key[2] names an empty column"},
		{"bad position", valid + "key = \"#0\"\n", "#0"},
		{"names without header", valid + "header = false\n", "a file without a header has no column names"},
		{"columns with header", valid + "columns = [\"a\"]\n", "columns names the columns of a file without a header"},
		{"skip column without values", valid + "skip_column = \"t\"\n", "skip_column and skip_values go together"},
		{"type values without column", valid + "fee_values = [\"fee\"]\n", "need a type_column"},
		{"positive with debit and credit", strings.Replace(valid, `amount = "a"`, "debit = \"d1\"\ncredit = \"c1\"\npositive = \"debit\"", 1), "positive"},
		{"not toml", "\x00\x01", "csv: invalid mapping"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseMapping([]byte(tc.in))
			if !errors.Is(err, ErrMapping) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v\nwant ErrMapping containing %q", err, tc.want)
			}
		})
	}
}

func TestPresetsLoad(t *testing.T) {
	names := Presets()
	if !reflect.DeepEqual(names, []string{"debit-credit", "direction", "signed-amount"}) {
		t.Fatalf("Presets() = %v", names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			m, err := LoadMapping(PresetPrefix + name)
			if err != nil {
				t.Fatal(err)
			}
			if m.Source != name {
				t.Errorf("source = %q, want the preset's name", m.Source)
			}
		})
	}
	if _, err := LoadMapping("preset:nope"); !errors.Is(err, ErrUnknownPreset) || !strings.Contains(err.Error(), "signed-amount") {
		t.Errorf("unknown preset: %v", err)
	}
	if _, err := LoadMapping("preset:../mapping"); !errors.Is(err, ErrUnknownPreset) {
		t.Errorf("path in a preset name: %v", err)
	}
}

func TestMappingExtendsPreset(t *testing.T) {
	m, err := ParseMapping([]byte("preset = \"signed-amount\"\nsource = \"acme-psp\"\ncurrency = \"\"\ncurrency_fixed = \"EUR\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Source != "acme-psp" || m.CurrencyFixed != "EUR" || m.Currency != "" || m.Amount != "amount" || m.Preset != "signed-amount" {
		t.Fatalf("merged mapping %+v", m)
	}
	if _, err := ParseMapping([]byte("preset = \"signed-amount\"\n")); !errors.Is(err, ErrMapping) || !strings.Contains(err.Error(), "must name its own source") {
		t.Errorf("a preset extension without its own source: %v", err)
	}
	if _, err := ParseMapping([]byte("preset = \"nope\"\nsource = \"x\"\n")); !errors.Is(err, ErrUnknownPreset) {
		t.Errorf("unknown preset: %v", err)
	}
}

func TestLoadMappingFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "acme.toml")
	if err := os.WriteFile(good, []byte("\ufeff"+contractMapping), 0o600); err != nil {
		t.Fatal(err)
	}
	if m, err := LoadMapping(good); err != nil || m.Source != "acme-psp" {
		t.Fatalf("LoadMapping = %+v, %v", m, err)
	}
	bad := filepath.Join(dir, "bad.toml")
	if err := os.WriteFile(bad, []byte(contractMapping+"colour = \"red\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadMapping(bad); !errors.Is(err, ErrMapping) || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), `"colour"`) {
		t.Errorf("LoadMapping(bad) = %v", err)
	}
	if _, err := LoadMapping(filepath.Join(dir, "missing.toml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	huge := filepath.Join(dir, "huge.toml")
	if err := os.WriteFile(huge, make([]byte, maxMappingBytes+10), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadMapping(huge); !errors.Is(err, ErrMapping) {
		t.Errorf("huge file: %v", err)
	}
}
