package csv

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/money"
)

// generated reads a generated file with its preset and returns the records
// by key (skipped rows apart), failing on any error.
func generated(t testing.TB, o GenerateOptions) (map[string]formats.Record, GenerateStats, int) {
	t.Helper()
	var buf bytes.Buffer
	st, err := Generate(&buf, o)
	if err != nil {
		t.Fatal(err)
	}
	if st.Bytes != int64(buf.Len()) {
		t.Errorf("stats say %d bytes, wrote %d", st.Bytes, buf.Len())
	}
	m, err := LoadMapping(PresetPrefix + o.Preset)
	if err != nil {
		t.Fatal(err)
	}
	recs, bad, err := readAll(t, m, buf.String(), Options{FileID: "gen.csv", Hasher: testHasher})
	if err != nil || len(bad) > 0 {
		t.Fatalf("%s: final %v, row errors %v", o.Preset, err, bad)
	}
	byKey, skipped := map[string]formats.Record{}, 0
	for _, r := range recs {
		if r.Kind == formats.Skip {
			skipped++
			continue
		}
		if _, dup := byKey[r.Key]; dup {
			t.Fatalf("key %s twice in one generated file", r.Key)
		}
		byKey[r.Key] = r
	}
	return byKey, st, skipped
}

func TestGeneratedFilesReadCleanly(t *testing.T) {
	for _, preset := range Presets() {
		for _, variant := range []struct {
			name string
			o    GenerateOptions
		}{
			{"plain", GenerateOptions{}},
			{"bom crlf", GenerateOptions{BOM: true, CRLF: true}},
			{"quoted subtotals", GenerateOptions{QuoteAll: true, SubtotalEvery: 7}},
			{"three exponents", GenerateOptions{Currencies: []string{"JPY", "USD", "BHD"}, SubtotalEvery: 3, CRLF: true, QuoteAll: true}},
		} {
			o := variant.o
			o.Preset, o.Rows, o.Seed = preset, 200, 42
			if preset == "direction" {
				o.PendingEvery = 5
			}
			t.Run(preset+"/"+variant.name, func(t *testing.T) {
				recs, st, skipped := generated(t, o)
				if int64(len(recs)) != st.Rows || int64(skipped) != st.Skipped {
					t.Fatalf("read %d records and %d skipped, stats say %d and %d", len(recs), skipped, st.Rows, st.Skipped)
				}
				if len(recs) < 100 {
					t.Fatalf("only %d records", len(recs))
				}
			})
		}
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	o := GenerateOptions{Preset: "signed-amount", Rows: 50, Seed: 7, QuoteAll: true, SubtotalEvery: 10}
	var a, b, c bytes.Buffer
	Generate(&a, o)
	Generate(&b, o)
	o.Seed = 8
	Generate(&c, o)
	if !bytes.Equal(a.Bytes(), b.Bytes()) || bytes.Equal(a.Bytes(), c.Bytes()) {
		t.Fatal("the same seed must give the same bytes, and another seed other bytes")
	}
}

// TestCorrectedReupload checks the generator's re-upload: keyed presets keep
// every original key and digest, add the new rows, and change exactly the
// rows whose amount was corrected; the file-and-line keyed preset shifts.
func TestCorrectedReupload(t *testing.T) {
	for _, preset := range []string{"signed-amount", "direction"} {
		t.Run(preset, func(t *testing.T) {
			orig, _, _ := generated(t, GenerateOptions{Preset: preset, Rows: 300, Seed: 3, SubtotalEvery: 50})
			re, _, _ := generated(t, GenerateOptions{Preset: preset, Rows: 300, Seed: 3, NewRows: 40, Shuffle: true, ChangeAmount: []int{5}, CRLF: true})
			if len(re) != len(orig)+40 {
				t.Fatalf("re-upload has %d records, want %d", len(re), len(orig)+40)
			}
			changed := 0
			for k, r := range orig {
				r2, ok := re[k]
				if !ok {
					t.Fatalf("key %s missing from the re-upload", k)
				}
				if formats.Digest(&r) != formats.Digest(&r2) {
					changed++
					if r2.Amount != r.Amount+1 {
						t.Errorf("%s: amount %d became %d", k, r.Amount, r2.Amount)
					}
				}
			}
			if changed != 1 {
				t.Fatalf("%d digests changed, want 1", changed)
			}
		})
	}
	t.Run("debit-credit keys by line", func(t *testing.T) {
		orig, _, _ := generated(t, GenerateOptions{Preset: "debit-credit", Rows: 100, Seed: 3})
		re, _, _ := generated(t, GenerateOptions{Preset: "debit-credit", Rows: 100, Seed: 3, Shuffle: true})
		same := 0
		for k, r := range orig {
			if r2, ok := re[k]; ok && formats.Digest(&r) == formats.Digest(&r2) {
				same++
			}
		}
		if same == len(orig) {
			t.Fatal("a shuffled file keyed by line kept every digest; the shuffle did nothing")
		}
	})
}

func TestGenerateRefuses(t *testing.T) {
	for _, o := range []GenerateOptions{
		{Preset: "nope"},
		{Preset: "signed-amount", Rows: -1},
		{Preset: "signed-amount", PendingEvery: 3},
		{Preset: "signed-amount", Currencies: []string{"XYZ"}},
	} {
		if _, err := Generate(io.Discard, o); !errors.Is(err, ErrGenerate) {
			t.Errorf("%+v: err = %v", o, err)
		}
	}
}

func TestPermutationIsABijection(t *testing.T) {
	for _, n := range []int{1, 2, 7, 100, 7919, 7920} {
		p := newPermutation(n, 12345, true)
		seen := make([]bool, n)
		for pos := range n {
			i := p.at(pos)
			if i < 0 || i >= n || seen[i] {
				t.Fatalf("n=%d: position %d maps to %d twice or out of range", n, pos, i)
			}
			seen[i] = true
		}
	}
}

// TestMillionRowsInConstantMemory streams a generated million-row file
// through the reader and checks that the heap stays small throughout.
func TestMillionRowsInConstantMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("streams a million rows")
	}
	pr, pw := io.Pipe()
	go func() {
		_, err := Generate(pw, GenerateOptions{Preset: "direction", Rows: 1_000_000, Seed: 1, SubtotalEvery: 1000, QuoteAll: true})
		pw.CloseWithError(err)
	}()
	m, _ := LoadMapping("preset:direction")
	r, err := NewReader(pr, m, Options{FileID: "big.csv", Hasher: testHasher})
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	var peak uint64
	for {
		_, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if n++; n%100_000 == 0 {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
	}
	if n != 1_001_000 {
		t.Fatalf("read %d rows", n)
	}
	if peak > 16<<20 {
		t.Fatalf("live heap reached %d bytes while streaming", peak)
	}
	t.Logf("%d rows, live heap at most %d KiB", n, peak>>10)
}

func TestGroupedAmounts(t *testing.T) {
	for in, want := range map[int64]string{0: "0.00", 100: "1.00", 123456: "1,234.56", -100000000: "-1,000,000.00"} {
		if got := grouped(in, money.MustCurrency("USD")); got != want {
			t.Errorf("grouped(%d) = %q, want %q", in, got, want)
		}
	}
	if got := grouped(1234567, money.MustCurrency("JPY")); !strings.EqualFold(got, "1,234,567") {
		t.Errorf("grouped JPY = %q", got)
	}
}

// Start and Days date the rows; IDStart moves the ids, so that the next
// file of a seed shares no key with the first.
func TestGenerateDatesAndIDStart(t *testing.T) {
	start := time.Date(2026, time.March, 2, 0, 0, 0, 0, time.UTC)
	for _, preset := range Presets() {
		first, _, _ := generated(t, GenerateOptions{Preset: preset, Rows: 50, Seed: 1, Start: start})
		next, _, _ := generated(t, GenerateOptions{Preset: preset, Rows: 50, Seed: 1, Start: start, Days: 3, IDStart: 50})
		for k, r := range first {
			if !r.ValueDate.Equal(start) {
				t.Fatalf("%s: %s dated %v, want %v", preset, k, r.ValueDate, start)
			}
		}
		days := map[time.Time]bool{}
		for k, r := range next {
			// A preset without an id column keys rows by file and line:
			// another file name separates those, not IDStart.
			if _, ok := first[k]; ok && !strings.Contains(k, ":gen.csv:") {
				t.Fatalf("%s: key %s in both files", preset, k)
			}
			if r.ValueDate.Before(start) || !r.ValueDate.Before(start.AddDate(0, 0, 3)) {
				t.Fatalf("%s: %s dated %v, outside the three days", preset, k, r.ValueDate)
			}
			days[r.ValueDate] = true
		}
		if len(days) < 2 {
			t.Errorf("%s: 50 rows over three days fell on %d", preset, len(days))
		}
	}
}
