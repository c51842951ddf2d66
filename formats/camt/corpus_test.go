package camt

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math/big"
	"os"
	"path/filepath"
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
	refused  bool
	warnings []string // warning codes that must appear
	lines    int      // statement lines, settlement totals included
}

var camtCorpus = map[string]corpusExpect{
	"dvbern-camt.054_P_CH2909000000250094239_1111111112_0_2022031011011199_v2019.xml": {lines: 1},
	"genkgo-camt053.v2.multi.statement.xml":                                           {lines: 2},
	"genkgo-camt053.v2.wrong.xml":                                                     {refused: true},
	"hbci4j-test-camt-ruecklastschrift.xml":                                           {lines: 2, warnings: []string{WarnUnbalanced}},
	"kedder-davider80.xml":                                                            {lines: 16},
	"moov-FI_camt_053_sample.xml.xml":                                                 {lines: 15},
	"oca-test-camt053":                                                                {lines: 5, warnings: []string{WarnUnbalanced}},
	"subite-LT625883379695428516-CAMT_053-2024-03-07.xml":                             {lines: 3, warnings: []string{WarnBalanceIndicator, WarnStatusMissing, WarnDateAssumed}},
	"viafintech-053-valid_example_with_datetime.xml":                                  {lines: 1, warnings: []string{WarnUnchecked}},
}

// TestCorpus reads every file of $CLEARING_CORPUS/camt. A file read without
// error must give, per currency, booked credit and debit sums equal to
// those computed here from the XML by a separate, simpler decoding (lines
// other than settlement totals, which repeat their details); keys must be
// unique. Files that break a money rule must be refused.
func TestCorpus(t *testing.T) {
	dir := corpus.Dir(t, "camt")
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
			want, known := camtCorpus[e.Name()]
			if !known {
				t.Logf("%s is not described in this test; checking sums only", e.Name())
			}
			if want.refused {
				if res.final == io.EOF || len(res.errs) == 0 || !errors.Is(res.final, ErrInvalidFile) {
					t.Fatalf("not refused: final %v, errors %v", res.final, res.errs)
				}
				return
			}
			if res.final != io.EOF {
				t.Fatalf("refused: %v, errors %v", res.final, res.errs)
			}
			if known && len(res.records) != want.lines {
				t.Errorf("%d lines, want %d", len(res.records), want.lines)
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
		t.Fatal("no camt files in the corpus")
	}
}

type sums map[string][2]*big.Int // currency -> credits, debits in minor units

// checkSums compares the records' booked sums with the document's.
func checkSums(t *testing.T, raw []byte, recs []formats.Record) {
	t.Helper()
	want := independentSums(t, raw)
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
		if r.LineType == formats.SettlementTotal {
			continue
		}
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

// independentSums decodes every Ntry of the document with its own minimal
// struct and exact rational arithmetic, counting entries whose status is
// BOOK or absent.
func independentSums(t *testing.T, raw []byte) sums {
	t.Helper()
	type ntry struct {
		Amt struct {
			V   string `xml:",chardata"`
			Ccy string `xml:"Ccy,attr"`
		} `xml:"Amt"`
		Ind string `xml:"CdtDbtInd"`
		Sts struct {
			V  string `xml:",chardata"`
			Cd string `xml:"Cd"`
		} `xml:"Sts"`
	}
	out := sums{}
	d := xml.NewDecoder(bytes.NewReader(raw))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("independent decoding: %v", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "Ntry" {
			continue
		}
		var n ntry
		if err := d.DecodeElement(&n, &se); err != nil {
			t.Fatal(err)
		}
		if st := strings.TrimSpace(n.Sts.V + n.Sts.Cd); st != "" && st != "BOOK" {
			continue
		}
		c := money.MustCurrency(n.Amt.Ccy)
		r, ok := new(big.Rat).SetString(strings.TrimSpace(n.Amt.V))
		if !ok {
			t.Fatalf("amount %q", n.Amt.V)
		}
		r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(c.Exponent)), nil)))
		if !r.IsInt() {
			t.Fatalf("amount %q is not whole minor units", n.Amt.V)
		}
		add(out, c.Code, r.Num(), strings.TrimSpace(n.Ind) == "CRDT")
	}
}
