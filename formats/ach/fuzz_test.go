package ach

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	moov "github.com/moov-io/ach"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/corpus"
)

// fuzzSeeds are generated files of every kind the generator writes, whole
// and damaged.
func fuzzSeeds(t testing.TB) [][]byte {
	entries := testEntries()
	ret := ReturnOf(entries[0], "R01", 1)
	dis := DishonorOf(ret, "R68", 2)
	h := DefaultHeader(testCreated)
	files := [][]byte{
		testFile(t, entries),
		write(t, func(w io.Writer) error { return WriteEntries(w, h, GenerateEntries(5, 12)) }),
		write(t, func(w io.Writer) error {
			return WriteReturns(w, h, slices.Values([]Return{ret, dis, ContestOf(dis, "R72", 3)}))
		}),
		write(t, func(w io.Writer) error {
			return WriteNotices(w, h, slices.Values([]Notice{NoticeOf(entries[1], "C02", "091000019", 1)}))
		}),
		write(t, func(w io.Writer) error { return WriteIAT(w, h, slices.Values(entries[:2])) }),
		write(t, func(w io.Writer) error {
			return WriteAdvices(w, h, slices.Values([]Advice{{CompanyID: "1234567890", CompanyName: "ACME",
				EffectiveDate: entries[0].EffectiveDate, ODFI: "12104288", TransactionCode: 84, Amount: 999,
				RDFI: "231380104", Account: "12345678", Operator: "01100001", JulianDay: 61, Sequence: 1}}))
		}),
	}
	base := files[0]
	files = append(files,
		bytes.ReplaceAll(base, []byte("\n"), nil),
		bytes.ReplaceAll(base, []byte("\n"), []byte("\r\n")),
		base[:len(base)/2],
		[]byte(strings.ReplaceAll(string(base), " \n", "\n")),
	)
	return files
}

// FuzzReader checks that no input makes the Reader panic or loop, that every
// ParseError names a line and a byte offset inside the input, that every
// Record is well formed, that a file with a ParseError never ends in io.EOF,
// and that moov-io/ach accepts every file the Reader accepts.
func FuzzReader(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed)
	}
	if os.Getenv("CLEARING_CORPUS") != "" {
		dir := corpus.Dir(f, "ach")
		paths, _ := filepath.Glob(filepath.Join(dir, "*", "*"))
		for _, p := range paths {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := NewReader(bytes.NewReader(data), Options{Hasher: testHasher, Limits: formats.Limits{MaxRecords: 5000}})
		sawError := false
		for range 4*len(data) + 10 {
			rec, err := rd.Next()
			var pe *formats.ParseError
			switch {
			case err == nil:
				checkFuzzRecord(t, rec, len(data))
			case errors.As(err, &pe):
				sawError = true
				if pe.Line < 1 || pe.Offset < 0 || pe.Offset > int64(len(data)) {
					t.Fatalf("error without a place in the input: %#v", pe)
				}
			case errors.Is(err, io.EOF):
				if sawError {
					t.Fatal("io.EOF after a ParseError")
				}
				checkMoovAgrees(t, data, rd.Warnings())
				return
			case errors.Is(err, ErrInvalidFile):
				if !sawError {
					t.Fatal("ErrInvalidFile without a ParseError")
				}
				return
			default:
				t.Fatalf("unexpected final error: %v", err)
			}
		}
		t.Fatal("the reader did not end")
	})
}

// checkMoovAgrees checks that moov-io/ach reads and validates a file this
// reader accepted: the reader may be stricter than moov-io/ach, and more
// lenient only in the checks it warned about.
func checkMoovAgrees(t *testing.T, data []byte, warnings []Warning) {
	t.Helper()
	// A warning is a check of moov-io/ach's that the Reader relaxes on
	// purpose (docs/formats/ach.md): moov-io/ach is asked to relax the same
	// ones, and only those.
	opts := &moov.ValidateOpts{}
	for _, w := range warnings {
		switch w.Code {
		case WarnFileHeader:
			opts.BypassOriginValidation, opts.BypassDestinationValidation = true, true
			opts.AllowSpecialCharacters, opts.SkipFileCreationValidation = true, true
			// The Reader reads a file ID modifier it cannot use as "A",
			// which no option of moov-io/ach does.
			if strings.Contains(w.Message, "FileIDModifier") && w.Offset+33 < int64(len(data)) {
				data = bytes.Clone(data)
				data[w.Offset+33] = 'A'
			}
		case WarnCreationDate:
			opts.SkipFileCreationValidation = true
		case WarnBatchNumber:
			opts.AllowUnorderedBatchNumbers = true
		case WarnFreeText:
			opts.AllowSpecialCharacters = true
		case WarnTracePrefix:
			opts.CustomTraceNumbers = true
		}
	}
	r := moov.NewReader(bytes.NewReader(data))
	r.SetValidation(opts)
	f, err := r.Read()
	if err == nil {
		err = f.ValidateWith(opts)
	}
	if err != nil {
		t.Fatalf("accepted a file that moov-io/ach rejects (warnings %v): %v", warnings, err)
	}
}

// checkFuzzRecord checks the invariants of any Record the Reader returns.
func checkFuzzRecord(t *testing.T, rec formats.Record, size int) {
	t.Helper()
	switch {
	case !strings.HasPrefix(rec.Key, "ach:") || strings.Count(rec.Key, ":") < 3:
		t.Fatalf("key %q", rec.Key)
	case rec.Amount < 0 || rec.Currency != Currency:
		t.Fatalf("amount %d %s", rec.Amount, rec.Currency)
	case rec.Direction != formats.Credit && rec.Direction != formats.Debit:
		t.Fatalf("direction %q", rec.Direction)
	case rec.Line < 1 || rec.Offset < 0 || rec.Offset >= int64(size):
		t.Fatalf("record at line %d offset %d of %d bytes", rec.Line, rec.Offset, size)
	case rec.Kind == formats.Clearing && rec.Amount == 0:
		t.Fatal("a clearing record without an amount")
	case rec.Kind == formats.Return && rec.Link == nil:
		t.Fatal("a return without a link")
	case rec.Account.ID == "" || rec.ValueDate.IsZero():
		t.Fatalf("account %q, value date %v", rec.Account.ID, rec.ValueDate)
	}
}
