package mt940

import (
	"errors"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/corpus"
	"github.com/clearing-dev/clearing/internal/money"
)

// corpusExpect is what a corpus file's INDEX.tsv line says of it, as this
// reader must see it.
type corpusExpect struct {
	refused    bool
	lines      int
	statements int
	warnings   []string
}

var mt940Corpus = map[string]corpusExpect{
	"jejik-volksbankenraiffeisenbanken.txt":    {lines: 12, statements: 8},
	"mt940rs-danskebank-MT940_FI_Example.sta":  {lines: 6, statements: 1, warnings: []string{WarnText}},
	"oca-test-ing.940":                         {lines: 8, statements: 1},
	"wolph-ASNB-mt940.txt":                     {lines: 8, statements: 31},
	"wolph-citi-mt940.txt":                     {lines: 5, statements: 1},
	"wolph-mBank-mt942.sta":                    {lines: 3, statements: 1, warnings: []string{WarnControl}},
	"wolph-raiffeisen-cmi.sta":                 {lines: 7, statements: 1, warnings: []string{WarnUnbalanced, WarnEncoding}},
	"wolph-sberbank-171011_01234945.sta":       {lines: 3, statements: 1},
	"zilverline-knab_invalid.txt":              {refused: true},
	"zilverline-rabobank_mt940_structured.txt": {lines: 9, statements: 2, warnings: []string{WarnText}},
}

// TestCorpus reads every file of $CLEARING_CORPUS/mt940. A file read
// without error must give, per currency, credit and debit sums equal to
// those computed here from the raw :61: lines by a regular expression;
// keys must be unique. Files that break a money rule must be refused.
func TestCorpus(t *testing.T) {
	dir := corpus.Dir(t, "mt940")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, e := range entries {
		if e.IsDir() || e.Name() == "INDEX.tsv" {
			continue
		}
		seen++
		t.Run(e.Name(), func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			res := readAll(t, string(raw), Options{})
			want, known := mt940Corpus[e.Name()]
			if !known {
				t.Logf("%s is not described in this test; checking sums only", e.Name())
			}
			if want.refused {
				if res.final == io.EOF || len(res.errs) == 0 || !errors.Is(res.final, ErrInvalidFile) {
					t.Fatalf("not refused: final %v, errors %v", res.final, res.errs)
				}
				for _, pe := range res.errs {
					if pe.Line <= 0 {
						t.Errorf("error without a line: %v", pe)
					}
				}
				return
			}
			if res.final != io.EOF {
				t.Fatalf("refused: %v, errors %v", res.final, res.errs)
			}
			if known && (len(res.records) != want.lines || len(res.statements) != want.statements) {
				t.Errorf("%d lines in %d statements, want %d in %d", len(res.records), len(res.statements), want.lines, want.statements)
			}
			for _, code := range want.warnings {
				if !slices.ContainsFunc(res.warnings, func(w Warning) bool { return w.Code == code }) {
					t.Errorf("no %s warning among %v", code, res.warnings)
				}
			}
			checkSums(t, raw, res.records)
		})
	}
	if seen == 0 {
		t.Fatal("no MT940 files in the corpus")
	}
}

type sums map[string][2]*big.Int // currency -> credits, debits in minor units

var (
	re61  = regexp.MustCompile(`^:61:\d{6}(?:\d{4}| {4})?(RC|RD|C|D)[A-Z]?(\d+,\d*)`)
	reCur = regexp.MustCompile(`^:(?:60[FM]:[CD]\d{6}|34F:)([A-Z]{3})`)
)

func checkSums(t *testing.T, raw []byte, recs []formats.Record) {
	t.Helper()
	want := sums{}
	cur := ""
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimLeft(strings.TrimRight(line, "\r"), "\x01\x03 ")
		if m := reCur.FindStringSubmatch(line); m != nil {
			cur = m[1]
		}
		m := re61.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		c := money.MustCurrency(cur)
		r, ok := new(big.Rat).SetString(strings.Replace(m[2], ",", ".", 1) + "0")
		if !ok {
			t.Fatalf("amount %q", m[2])
		}
		r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(c.Exponent)), nil)))
		add(want, cur, r.Num(), m[1] == "C" || m[1] == "RD")
	}
	got := sums{}
	keys := map[string]bool{}
	for _, r := range recs {
		if keys[r.Key] {
			t.Errorf("duplicate key %s", r.Key)
		}
		if err := formats.Check(&r); err != nil {
			t.Errorf("formats.Check: %v", err)
		}
		keys[r.Key] = true
		add(got, r.Currency, big.NewInt(r.Amount), r.Direction == formats.Credit)
	}
	if len(got) != len(want) {
		t.Errorf("currencies %v, want %v", got, want)
	}
	for c, w := range want {
		g, ok := got[c]
		if !ok || g[0].Cmp(w[0]) != 0 || g[1].Cmp(w[1]) != 0 {
			t.Errorf("%s: credits/debits %v, want %v", c, g, w)
		}
	}
}

func add(s sums, cur string, v *big.Int, credit bool) {
	p, ok := s[cur]
	if !ok {
		p = [2]*big.Int{new(big.Int), new(big.Int)}
		s[cur] = p
	}
	i := 1
	if credit {
		i = 0
	}
	p[i].Add(p[i], v)
}

// TestCorpusLineEndingsDoNotMatter reads every accepted corpus file again
// with LF turned into CRLF and CRLF into LF: the same records, keys and
// warnings' codes come out, only offsets move.
func TestCorpusLineEndingsDoNotMatter(t *testing.T) {
	dir := corpus.Dir(t, "mt940")
	for name, want := range mt940Corpus {
		if want.refused {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		lf := strings.ReplaceAll(string(raw), "\r\n", "\n")
		a, b := readAll(t, lf, Options{}), readAll(t, strings.ReplaceAll(lf, "\n", "\r\n"), Options{})
		if a.final != io.EOF || b.final != io.EOF || len(a.records) != len(b.records) || len(a.warnings) != len(b.warnings) {
			t.Fatalf("%s: %v/%v, %d/%d records", name, a.final, b.final, len(a.records), len(b.records))
		}
		for i := range a.records {
			x, y := a.records[i], b.records[i]
			x.Offset, y.Offset = 0, 0
			if x != y {
				t.Errorf("%s: record %d differs:\n%+v\n%+v", name, i, x, y)
			}
		}
	}
}
