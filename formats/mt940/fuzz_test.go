package mt940

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/formats/internal/statementtest"
)

// FuzzReader feeds the reader arbitrary bytes. It must never panic or loop,
// every ParseError must name a line and an offset inside the input, the
// verdict must be io.EOF only for a file without errors, and every Record
// must meet the contract. Seeds: generated statements, the testdata cases
// and, when CLEARING_CORPUS is set, the shared corpus's MT940 files.
func FuzzReader(f *testing.F) {
	for _, o := range []GenerateOptions{{}, {Envelope: true, CRLF: true}} {
		var b bytes.Buffer
		if err := Generate(&b, RandomStatements(RandomOptions{Seed: 1, Statements: 2, Lines: 4, BlankReferencePercent: 50}), o); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes())
	}
	cases, _ := filepath.Glob(filepath.Join("testdata", "cases", "*.txt"))
	for _, p := range cases {
		raw, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		_, in, _ := statementtest.SplitCase(string(raw))
		f.Add([]byte(in))
	}
	if root := os.Getenv("CLEARING_CORPUS"); root != "" {
		files, _ := filepath.Glob(filepath.Join(root, "mt940", "*"))
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil && !strings.HasSuffix(p, ".tsv") {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkReader(t, in)
	})
}

func checkReader(t *testing.T, in []byte) {
	r := NewReader(bytes.NewReader(in), Options{Hasher: testHasher, MaxErrors: 50})
	var parseErrors int
	for calls := 0; ; calls++ {
		if calls > 2*len(in)+100 {
			t.Fatalf("no verdict after %d calls", calls)
		}
		rec, err := r.Next()
		var pe *formats.ParseError
		switch {
		case err == nil:
			checkRecord(t, &rec)
		case errors.As(err, &pe):
			parseErrors++
			if pe.Line <= 0 || pe.Offset < 0 || pe.Offset > int64(len(in)) || pe.Err == nil {
				t.Fatalf("ParseError without a usable position: %#v", pe)
			}
		case err == io.EOF:
			if parseErrors > 0 {
				t.Fatalf("io.EOF after %d parse errors", parseErrors)
			}
			return
		default:
			var fe *FileError
			if !errors.As(err, &fe) || fe.First == nil || fe.First.Line <= 0 || parseErrors == 0 || fe.Count != parseErrors {
				t.Fatalf("final error %v after %d parse errors", err, parseErrors)
			}
			return
		}
	}
}

func checkRecord(t *testing.T, r *formats.Record) {
	if err := formats.Check(r); err != nil {
		t.Fatalf("formats.Check: %v", err)
	}
	ok := strings.HasPrefix(r.Key, "mt940:") && len(r.Key) <= 512 && r.Amount >= 0 && r.Amount <= formats.MaxAmountMinor &&
		len(r.Currency) == 3 && r.Currency != "XXX" && !r.ValueDate.IsZero() && r.Line > 0 && r.Offset >= 0 &&
		strings.HasPrefix(r.Account.ID, "cust:") && (r.Direction == formats.Credit || r.Direction == formats.Debit) &&
		r.LineType != "" && len(r.Reference) <= maxRefBytes && len(r.AltReference) <= maxRefBytes
	switch r.Kind {
	case formats.Clearing:
		ok = ok && r.Amount > 0
	case formats.Notice:
		ok = ok && r.Amount == 0
	default:
		ok = false
	}
	if !ok {
		t.Fatalf("record breaks the contract: %+v", r)
	}
}
