package mt940

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/clearing-dev/clearing/formats"
)

// TestGenerateRoundTrip writes random statements with and without the
// block envelope, LF and CRLF, and reads them back with no error or
// warning, every line's money back and unique keys.
func TestGenerateRoundTrip(t *testing.T) {
	for _, o := range []GenerateOptions{{}, {Envelope: true}, {CRLF: true}, {Envelope: true, CRLF: true}} {
		stmts := RandomStatements(RandomOptions{Seed: 11, Statements: 4, Lines: 30, BlankReferencePercent: 30})
		var b bytes.Buffer
		if err := Generate(&b, stmts, o); err != nil {
			t.Fatal(err)
		}
		res := readAll(t, b.String(), Options{})
		if res.final != io.EOF || len(res.errs) > 0 || len(res.warnings) > 0 {
			t.Fatalf("%+v: final %v, errors %v, warnings %v", o, res.final, res.errs, res.warnings)
		}
		if len(res.records) != 120 || len(res.statements) != 4 {
			t.Errorf("%+v: %d lines in %d statements", o, len(res.records), len(res.statements))
		}
		checkSums(t, b.Bytes(), res.records)
		for i, r := range res.records {
			l := stmts[i/30].Lines[i%30]
			if r.Amount != l.Amount || r.Direction != l.Direction || r.Reference != l.EndToEnd || (r.LineType == formats.ReturnLine) != l.Reversal {
				t.Fatalf("line %d: %+v from %+v", i, r, l)
			}
		}
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	write := func() []byte {
		var b bytes.Buffer
		if err := Generate(&b, RandomStatements(RandomOptions{Seed: 3, Lines: 20}), GenerateOptions{Envelope: true}); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	if !bytes.Equal(write(), write()) {
		t.Error("two runs wrote different files")
	}
}

// TestGeneratePlantsAnUnbalancedStatement: a closing balance the lines do
// not reach is read with a warning, not refused.
func TestGeneratePlantsAnUnbalancedStatement(t *testing.T) {
	stmts := RandomStatements(RandomOptions{Seed: 5, Lines: 3})
	wrong := int64(-1)
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
		{Reference: "R", Account: "A", Currency: "XXX"},
		{Reference: "R", Account: "A", Currency: "EUR", Lines: []Line{{Amount: 1, Direction: "X"}}},
		{Reference: "R", Account: "A", Currency: "EUR", Lines: []Line{{Amount: -1, Direction: formats.Debit}}},
	} {
		if err := Generate(io.Discard, []StatementSpec{s}, GenerateOptions{}); !errors.Is(err, ErrInvalidLine) {
			t.Errorf("Generate(%+v) = %v, want ErrInvalidLine", s, err)
		}
	}
}
