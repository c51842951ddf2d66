package bai2

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats"
)

// FuzzReader feeds the reader arbitrary bytes. It must never panic or loop,
// every ParseError must name a line and offset, the verdict must be io.EOF
// only for a file without errors, and every Record must meet the contract.
// Seeds: generated statements, the testdata cases and, when CLEARING_CORPUS
// is set, the shared corpus's samples and fuzz seeds.
func FuzzReader(f *testing.F) {
	for _, o := range []RandomOptions{{Seed: 1, Lines: 5}, {Seed: 2, Lines: 30, Days: 2, BlankReferencePercent: 50}} {
		var b bytes.Buffer
		if err := Generate(&b, RandomLines(o), GenerateOptions{RecordLength: 40}); err != nil {
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
		in, _, _ := strings.Cut(string(raw), "----\n")
		f.Add([]byte(in))
	}
	for _, seed := range corpusSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkReader(t, in)
	})
}

// corpusSeeds returns the shared corpus's BAI2 files and fuzz seeds, or
// nothing when the corpus is absent: the fuzz target must run on its
// generated seeds alone, so it does not skip the way corpus tests do.
func corpusSeeds(f *testing.F) [][]byte {
	root := os.Getenv("CLEARING_CORPUS")
	if root == "" {
		return nil
	}
	dir := filepath.Join(root, "bai2")
	var seeds [][]byte
	for _, name := range []string{"sample1.txt", "sample2.txt", "invalid-sample-parseError.txt"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			seeds = append(seeds, b)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "fuzz")); err == nil {
		for _, s := range fuzzSeeds(f, filepath.Join(dir, "fuzz")) {
			seeds = append(seeds, []byte(s))
		}
	}
	return seeds
}

func checkReader(t *testing.T, in []byte) {
	r := NewReader(bytes.NewReader(in), Options{Hasher: testHasher, MaxErrors: 50})
	var parseErrors int
	for calls := 0; ; calls++ {
		if calls > len(in)+60 {
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
	ok := strings.HasPrefix(r.Key, "bai2:") && len(r.Key) <= 512 && r.Amount >= 0 && len(r.Currency) == 3 &&
		!r.ValueDate.IsZero() && r.Line > 0 && r.Offset >= 0 && strings.HasPrefix(r.Account.ID, "cust:")
	switch r.Kind {
	case formats.Clearing:
		ok = ok && r.Amount > 0 && (r.Direction == formats.Credit || r.Direction == formats.Debit)
	case formats.Notice:
		ok = ok && r.Amount == 0 && (r.Direction == formats.Credit || r.Direction == formats.Debit)
	case formats.Skip:
		ok = ok && r.Direction == ""
	default:
		ok = false
	}
	if !ok {
		t.Fatalf("record breaks the contract: %+v", r)
	}
}
