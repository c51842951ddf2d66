package camt

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/clearing-dev/clearing/formats"
)

// TestGenerateRoundTrip writes random statements in several versions and
// reads them back: no error or warning, every entry's money back, batches
// as settlement totals beside their details, charges as fee lines.
func TestGenerateRoundTrip(t *testing.T) {
	for _, v := range []string{"001.02", "001.04", "001.08", "001.13"} {
		t.Run(v, func(t *testing.T) {
			stmts := RandomStatements(RandomOptions{Seed: 7, Statements: 3, Entries: 40, BatchPercent: 20, ChargesPercent: 30})
			var b bytes.Buffer
			if err := Generate(&b, stmts, GenerateOptions{Version: v, MsgID: "GEN-1"}); err != nil {
				t.Fatal(err)
			}
			res := readAll(t, b.String(), Options{})
			if res.final != io.EOF || len(res.errs) > 0 || len(res.warnings) > 0 {
				t.Fatalf("final %v, errors %v, warnings %v", res.final, res.errs, res.warnings)
			}
			var wantLines, totals, fees int
			for _, s := range stmts {
				for _, e := range s.Entries {
					switch {
					case len(e.Details) >= 2:
						wantLines += 1 + len(e.Details)
						totals++
					case e.Charges > 0:
						wantLines += 2
						fees++
					default:
						wantLines++
					}
				}
			}
			var gotTotals, gotFees int
			for _, r := range res.records {
				switch r.LineType {
				case formats.SettlementTotal:
					gotTotals++
				case formats.Fee:
					gotFees++
				}
			}
			if len(res.records) != wantLines || gotTotals != totals || gotFees != fees || len(res.statements) != 3 {
				t.Errorf("%d lines (%d totals, %d fees) in %d statements, want %d (%d, %d) in 3",
					len(res.records), gotTotals, gotFees, len(res.statements), wantLines, totals, fees)
			}
			checkSums(t, b.Bytes(), res.records)
			for _, s := range res.statements {
				if len(s.Totals) != 1 || !s.Totals[0].Checked || !s.Totals[0].Balanced {
					t.Errorf("statement %+v does not check out", s)
				}
			}
		})
	}
}

// TestGenerateIsDeterministic: the same options give the same bytes.
func TestGenerateIsDeterministic(t *testing.T) {
	write := func() []byte {
		var b bytes.Buffer
		if err := Generate(&b, RandomStatements(RandomOptions{Seed: 3, Entries: 20, BatchPercent: 30}), GenerateOptions{}); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	if !bytes.Equal(write(), write()) {
		t.Error("two runs wrote different documents")
	}
}

// TestGeneratePlantsAnUnbalancedStatement: a closing balance given by the
// caller that the entries do not reach is read with a warning, not refused.
func TestGeneratePlantsAnUnbalancedStatement(t *testing.T) {
	stmts := RandomStatements(RandomOptions{Seed: 5, Entries: 3})
	wrong := int64(1)
	stmts[0].Closing = &wrong
	var b bytes.Buffer
	if err := Generate(&b, stmts, GenerateOptions{}); err != nil {
		t.Fatal(err)
	}
	res := readAll(t, b.String(), Options{})
	if res.final != io.EOF || len(res.warnings) != 1 || res.warnings[0].Code != WarnUnbalanced {
		t.Fatalf("final %v, warnings %v", res.final, res.warnings)
	}
}

func TestGenerateRefusesWhatItCannotWrite(t *testing.T) {
	for _, s := range []StatementSpec{
		{ID: "S", IBAN: "DE89370400440532013000", Currency: "XXX"},
		{ID: "S", IBAN: "DE89370400440532013000", Currency: "EUR", Entries: []Entry{{Amount: 1, Direction: "X"}}},
		{ID: "S", IBAN: "DE89370400440532013000", Currency: "EUR", Entries: []Entry{{Amount: formats.MaxAmountMinor + 1, Direction: formats.Credit}}},
	} {
		if err := Generate(io.Discard, []StatementSpec{s}, GenerateOptions{}); !errors.Is(err, ErrInvalidEntry) {
			t.Errorf("Generate(%+v) = %v, want ErrInvalidEntry", s, err)
		}
	}
	if err := Generate(io.Discard, nil, GenerateOptions{Version: "001.99"}); !errors.Is(err, ErrInvalidEntry) {
		t.Errorf("unknown version: %v", err)
	}
}
