package bai2

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/clearing-dev/clearing/formats"
)

// TestGenerateRoundTrip is a property test: whatever lines the generator is
// given, the reader returns them as written, with trailers that check out.
func TestGenerateRoundTrip(t *testing.T) {
	codes := []int{108, 115, 142, 195, 257, 398, 409, 451, 475, 555, 661, 698, 925, 975, 890}
	days := []time.Time{formats.Date(2026, 1, 5), formats.Date(2026, 1, 6), formats.Date(2026, 2, 28)}
	rapid.Check(t, func(t *rapid.T) {
		opts := GenerateOptions{Originator: "BANK1", RecordLength: rapid.IntRange(40, 120).Draw(t, "recordLength")}
		lines := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) Line {
			l := Line{
				Account:           rapid.SampledFrom([]string{"1001", "1002", "000300040005"}).Draw(t, "account"),
				Currency:          rapid.SampledFrom([]string{"", "USD", "JPY", "BHD", "EUR"}).Draw(t, "currency"),
				Date:              rapid.SampledFrom(days).Draw(t, "date"),
				TypeCode:          rapid.SampledFrom(codes).Draw(t, "code"),
				Amount:            rapid.Int64Range(1, formats.MaxAmountMinor).Draw(t, "amount"),
				BankReference:     rapid.StringMatching(`([A-Z0-9][A-Z0-9-]{0,30})?`).Draw(t, "bankRef"),
				CustomerReference: rapid.StringMatching(`([A-Z0-9][A-Z0-9 .]{0,20}[A-Z0-9])?`).Draw(t, "custRef"),
				Text:              rapid.StringMatching(`([ -.0-~][ -~]{0,150}[ -.0-~])?`).Draw(t, "text"),
			}
			if l.TypeCode == nonMonetary {
				l.Amount = 0
			}
			if rapid.Bool().Draw(t, "valueDated") {
				l.ValueDate = l.Date.AddDate(0, 0, rapid.IntRange(-3, 3).Draw(t, "valueShift"))
			}
			return l
		}), 0, 40).Draw(t, "lines")
		var buf bytes.Buffer
		if err := Generate(&buf, slices.Values(lines), opts); err != nil {
			t.Fatalf("Generate: %v", err)
		}
		res := readAll(t, buf.String(), Options{})
		if res.final != io.EOF || len(res.errs) > 0 {
			t.Fatalf("final %v, errors %v\n%s", res.final, res.errs, buf.String())
		}
		if len(res.records) != len(lines) {
			t.Fatalf("%d records for %d lines", len(res.records), len(lines))
		}
		for i, l := range lines {
			checkRoundTrip(t, l, res.records[i], buf.String())
		}
		// Every field drawn here fits a line of 40, so no line may be longer
		// than the record length.
		for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
			if len(line) > opts.RecordLength {
				t.Fatalf("line %q is longer than %d", line, opts.RecordLength)
			}
		}
	})
}

func checkRoundTrip(t *rapid.T, l Line, r formats.Record, file string) {
	want := l.Date
	if !l.ValueDate.IsZero() {
		want = l.ValueDate
	}
	cur := l.Currency
	if cur == "" {
		cur = "USD"
	}
	tc, _ := detailType(l.TypeCode, nil)
	if r.Amount != l.Amount || r.Currency != cur || r.Direction != tc.Direction || !r.ValueDate.Equal(want) ||
		r.Reference != l.BankReference || r.AltReference != l.CustomerReference ||
		r.Account != testHasher.Account("bai2:BANK1", l.Account) || !strings.HasPrefix(r.Key, "bai2:BANK1:") {
		t.Fatalf("line %+v read back as %+v\n%s", l, r, file)
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	gen := func(seed uint64) []byte {
		var b bytes.Buffer
		if err := Generate(&b, RandomLines(RandomOptions{Seed: seed, Lines: 200, Days: 2, BlankReferencePercent: 20}), GenerateOptions{}); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	if a, b := gen(7), gen(7); !bytes.Equal(a, b) {
		t.Error("the same seed gave two files")
	}
	if a, b := gen(7), gen(8); bytes.Equal(a, b) {
		t.Error("two seeds gave one file")
	}
}

// TestGenerateGolden pins the generator's output for one seed, so that a
// change in the written format shows up in review. Run with -rewrite to
// accept a deliberate change.
func TestGenerateGolden(t *testing.T) {
	var b bytes.Buffer
	err := Generate(&b, RandomLines(RandomOptions{Seed: 1, Lines: 12, Days: 2, BlankReferencePercent: 30}),
		GenerateOptions{Created: time.Date(2026, 1, 7, 6, 30, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "generate_seed1.bai2")
	if *rewrite {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("generated:\n%s\nwant:\n%s", b.Bytes(), want)
	}
	res := readAll(t, b.String(), Options{})
	if res.final != io.EOF || len(res.records) != 12 {
		t.Errorf("golden file reads as %d records, final %v", len(res.records), res.final)
	}
}

func TestGenerateEmpty(t *testing.T) {
	var b bytes.Buffer
	if err := Generate(&b, slices.Values([]Line(nil)), GenerateOptions{}); err != nil {
		t.Fatal(err)
	}
	res := readAll(t, b.String(), Options{})
	if res.final != io.EOF || len(res.records) != 0 {
		t.Fatalf("empty statement %q reads as final %v, errors %v", b.String(), res.final, res.errs)
	}
}

func TestGenerateRefusesInvalidLines(t *testing.T) {
	ok := Line{Account: "1001", Date: formats.Date(2026, 1, 5), TypeCode: 195, Amount: 100}
	for name, mutate := range map[string]func(*Line){
		"no account":               func(l *Line) { l.Account = "" },
		"comma in account":         func(l *Line) { l.Account = "10,01" },
		"unknown currency":         func(l *Line) { l.Currency = "XXY" },
		"no date":                  func(l *Line) { l.Date = time.Time{} },
		"loan code":                func(l *Line) { l.TypeCode = 721 },
		"negative amount":          func(l *Line) { l.Amount = -1 },
		"amount on non-monetary":   func(l *Line) { l.TypeCode = 890 },
		"colon in bank reference":  func(l *Line) { l.BankReference = "A:B" },
		"slash in bank reference":  func(l *Line) { l.BankReference = "A/B" },
		"hash-led bank reference":  func(l *Line) { l.BankReference = "#1" },
		"spaces around reference":  func(l *Line) { l.CustomerReference = " C1" },
		"text ends with a slash":   func(l *Line) { l.Text = "PAID/" },
		"text with a control byte": func(l *Line) { l.Text = "A\tB" },
	} {
		t.Run(name, func(t *testing.T) {
			l := ok
			mutate(&l)
			err := Generate(io.Discard, slices.Values([]Line{ok, l}), GenerateOptions{})
			if !errors.Is(err, ErrInvalidLine) {
				t.Errorf("Generate = %v, want ErrInvalidLine", err)
			}
		})
	}
	if err := Generate(io.Discard, slices.Values([]Line{ok}), GenerateOptions{Sender: "A,B"}); !errors.Is(err, ErrInvalidLine) {
		t.Errorf("bad sender: %v", err)
	}
}

// TestRandomLinesKeysAreUnique checks that a generated statement never
// produces two details with one key, with bank references or without.
func TestRandomLinesKeysAreUnique(t *testing.T) {
	for _, blank := range []int{0, 50, 100} {
		var b bytes.Buffer
		if err := Generate(&b, RandomLines(RandomOptions{Seed: 3, Lines: 2000, Days: 3, Accounts: 4, BlankReferencePercent: blank}), GenerateOptions{}); err != nil {
			t.Fatal(err)
		}
		res := readAll(t, b.String(), Options{})
		seen := map[string]bool{}
		for _, r := range res.records {
			if seen[r.Key] {
				t.Fatalf("blank %d%%: duplicate key %s", blank, r.Key)
			}
			seen[r.Key] = true
		}
		if res.final != io.EOF || len(seen) != 2000 {
			t.Fatalf("blank %d%%: %d keys, final %v", blank, len(seen), res.final)
		}
	}
}
