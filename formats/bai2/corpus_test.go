package bai2

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/corpus"
)

// TestCorpusSample1 reads moov-io/bai2's sample1.txt: CAD, no bank
// references, one account reported in two sections under one as-of date.
func TestCorpusSample1(t *testing.T) {
	res := readAll(t, string(corpus.Read(t, "bai2", "sample1.txt")), Options{})
	if res.final != io.EOF || len(res.errs) > 0 {
		t.Fatalf("final %v, errors %v", res.final, res.errs)
	}
	if len(res.records) != 17 || len(res.accounts) != 2 {
		t.Fatalf("%d records and %d accounts, want 17 and 2", len(res.records), len(res.accounts))
	}
	keys := map[string]bool{}
	var credits, debits int64
	for _, r := range res.records {
		if keys[r.Key] {
			t.Errorf("duplicate key %s", r.Key)
		}
		keys[r.Key] = true
		if r.Currency != "CAD" || r.Kind != formats.Clearing || r.Reference != "" {
			t.Errorf("record %+v", r)
		}
		switch r.Direction {
		case formats.Credit:
			credits += r.Amount
		case formats.Debit:
			debits += r.Amount
		}
	}
	// The 03 records report total credits (100) and debits (400); the
	// details must add up to them.
	if credits != 208500+111500 || debits != 208500+111500 {
		t.Errorf("credits %d, debits %d", credits, debits)
	}
	first, last := res.records[0], res.records[16]
	if first.Amount != 2500 || first.Direction != formats.Debit || !first.ValueDate.Equal(formats.Date(2006, time.March, 16)) ||
		!strings.HasSuffix(first.Key, ":2006-03-17:#1") || first.Line != 5 {
		t.Errorf("first record %+v", first)
	}
	if !strings.HasSuffix(last.Key, ":#17") || last.Amount != 500 || last.Line != 24 {
		t.Errorf("last record %+v", last)
	}
	if a := res.accounts[0]; a.ControlTotal != 834000 || a.Records != 14 || len(a.Summaries) != 4 || a.Summaries[2].ItemCount != 3 {
		t.Errorf("first account %+v", a)
	}
}

// TestCorpusSample2 reads the specification's own example: default
// currency, continuations inside summaries, funds types S, V, D and 1, and a
// correction group.
func TestCorpusSample2(t *testing.T) {
	res := readAll(t, string(corpus.Read(t, "bai2", "sample2.txt")), Options{})
	if res.final != io.EOF || len(res.errs) > 0 {
		t.Fatalf("final %v, errors %v", res.final, res.errs)
	}
	want := []struct {
		detail    string
		amount    int64
		lineType  formats.LineType
		ref, alt  string
		valueDate time.Time
	}{
		{"115 Lockbox Deposit", 450000, formats.SettlementTotal, "", "", formats.Date(2004, 6, 20)},
		{"115 Lockbox Deposit", 500000, formats.SettlementTotal, "", "", formats.Date(2004, 6, 20)},
		{"218 Foreign Collection Credit", 20000000, formats.Payment, "SP4738", "YRC065321", formats.Date(2004, 6, 22)},
		{"195 Incoming Money Transfer", 10000000, formats.Payment, "", "", formats.Date(2004, 6, 20)},
	}
	if len(res.records) != len(want) || len(res.accounts) != 5 {
		t.Fatalf("%d records and %d accounts", len(res.records), len(res.accounts))
	}
	for i, w := range want {
		r := res.records[i]
		if r.Detail != w.detail || r.Amount != w.amount || r.LineType != w.lineType || r.Reference != w.ref ||
			r.AltReference != w.alt || !r.ValueDate.Equal(w.valueDate) || r.Currency != "USD" || r.Direction != formats.Credit {
			t.Errorf("record %d = %+v", i, r)
		}
	}
	d := res.accounts[3].Summaries[2]
	if d.TypeCode != 110 || d.Amount != 70000000 || d.ItemCount != 15 || len(d.Funds.Distributions) != 3 ||
		d.Funds.Distributions[2] != (Distribution{Days: 3, Amount: 20000000}) {
		t.Errorf("distributed summary %+v", d)
	}
	if res.accounts[4].GroupStatus != 3 {
		t.Errorf("correction group status %d", res.accounts[4].GroupStatus)
	}
}

// TestCorpusInvalidSample checks what moov-io/bai2's own test expects for a
// file that starts with record type 00 ("ERROR parsing file on line 1
// (unsupported record type 00)"): the parse error names line 1 and the
// record type, and the final error points at line 1 without repeating it.
func TestCorpusInvalidSample(t *testing.T) {
	res := readAll(t, string(corpus.Read(t, "bai2", "invalid-sample-parseError.txt")), Options{})
	if res.final == nil || !strings.Contains(res.final.Error(), "line 1") || strings.Contains(res.final.Error(), "record type 00") {
		t.Fatalf("final error %v, want one naming line 1 without repeating the parse error", res.final)
	}
	if len(res.errs) == 1 && !strings.Contains(res.errs[0].Error(), "unsupported record type 00") {
		t.Errorf("parse error %v does not name the record type", res.errs[0])
	}
	if !errors.Is(res.final, ErrInvalidFile) || !errors.Is(res.final, formats.ErrNotThisFormat) {
		t.Errorf("final error %v does not match ErrInvalidFile and ErrNotThisFormat", res.final)
	}
	if len(res.errs) != 1 || res.errs[0].Line != 1 || !errors.Is(res.errs[0], ErrRecordType) {
		t.Errorf("parse errors %v", res.errs)
	}
}

// TestCorpusFuzzSeeds reads moov-io/bai2's fuzz seeds, which are all
// malformed: each must be rejected with errors that name a line.
func TestCorpusFuzzSeeds(t *testing.T) {
	seeds := fuzzSeeds(t, corpus.Dir(t, "bai2", "fuzz"))
	if len(seeds) == 0 {
		t.Fatal("no fuzz seeds in the corpus")
	}
	for name, in := range seeds {
		t.Run(name, func(t *testing.T) {
			res := readAll(t, in, Options{})
			if res.final == io.EOF || len(res.errs) == 0 {
				t.Fatalf("malformed seed accepted: %v", res.final)
			}
			for _, e := range res.errs {
				if e.Line <= 0 {
					t.Errorf("error without a line: %v", e)
				}
			}
		})
	}
}

// fuzzSeeds reads Go fuzz corpus files ("go test fuzz v1" and one string
// value) from dir.
func fuzzSeeds(t testing.TB, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	seeds := map[string]string{}
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
		if len(lines) != 2 || lines[0] != "go test fuzz v1" {
			t.Fatalf("%s is not a one-value fuzz seed", e.Name())
		}
		v, ok := strings.CutPrefix(lines[1], "string(")
		v, ok2 := strings.CutSuffix(v, ")")
		s, err := strconv.Unquote(v)
		if !ok || !ok2 || err != nil {
			t.Fatalf("%s: cannot decode %q", e.Name(), lines[1])
		}
		seeds[e.Name()] = s
	}
	return seeds
}
