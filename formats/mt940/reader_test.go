package mt940

import (
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats"
)

func TestReaderRefusesTheZeroHasher(t *testing.T) {
	r := NewReader(strings.NewReader(":20:X\n"), Options{})
	if _, err := r.Next(); !errors.Is(err, ErrNoHasher) {
		t.Fatalf("Next = %v, want ErrNoHasher", err)
	}
}

func TestReaderNotMT940IsNotThisFormat(t *testing.T) {
	for _, in := range []string{"", "hello\nworld\n", "01,SENDER,RECEIVER,261129,1200,1,,,2/\n", "<Document/>"} {
		res := readAll(t, in, Options{})
		if !errors.Is(res.final, formats.ErrNotThisFormat) {
			t.Errorf("%q: final %v, want ErrNotThisFormat", in, res.final)
		}
	}
}

func TestReaderTypeCodeOverride(t *testing.T) {
	in := ":20:R\n:25:123\n:28C:1/1\n:60F:C261129EUR0,\n:61:261129D1,00NTRFNONREF//B1\n:61:261129D2,00NMSCNONREF//B2\n:62F:D261129EUR3,00\n"
	res := readAll(t, in, Options{TypeCodes: map[string]formats.LineType{"MSC": formats.Fee}})
	if len(res.records) != 2 || res.records[0].LineType != formats.Payment || res.records[1].LineType != formats.Fee {
		t.Fatalf("records %v, final %v", res.records, res.final)
	}
}

func TestReaderLineLimit(t *testing.T) {
	in := ":20:R\n:25:" + strings.Repeat("9", 200) + "\n"
	res := readAll(t, in, Options{Limits: formats.Limits{MaxLineBytes: 64}})
	if len(res.errs) == 0 || !errors.Is(res.errs[0], formats.ErrTooLarge) || res.errs[0].Line != 2 {
		t.Fatalf("errors %v", res.errs)
	}
}

// TestReaderMemoryIsFlat reads 100 statements of 1,000 lines from a
// stream: the live heap afterwards must not have grown with them.
func TestReaderMemoryIsFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("large input")
	}
	pr, pw := io.Pipe()
	go func() {
		stmts := RandomStatements(RandomOptions{Seed: 9, Statements: 100, Lines: 1000, BlankReferencePercent: 10})
		pw.CloseWithError(Generate(pw, stmts, GenerateOptions{Envelope: true}))
	}()
	r := NewReader(pr, Options{Hasher: testHasher})
	var before runtime.MemStats
	n := 0
	for {
		_, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 1000 {
			runtime.GC()
			runtime.ReadMemStats(&before)
		}
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	if n != 100_000 {
		t.Fatalf("%d lines", n)
	}
	if grow := int64(after.HeapAlloc) - int64(before.HeapAlloc); grow > 4<<20 {
		t.Errorf("heap grew by %d bytes over %d lines", grow, n)
	}
}

// TestReaderDashEndsTheMessageBeforeABankHeader guards ABN AMRO's layout:
// each message ends with a "-" line and the next starts with the bank's
// "ABNANL2A" / "940" header lines. The header is not a continuation of the
// closing balance before the dash: it is text outside any field, warned
// about, and both messages are read.
func TestReaderDashEndsTheMessageBeforeABankHeader(t *testing.T) {
	msg := func(n string) string {
		return "ABNANL2A\n940\nABNANL2A\n:20:ABN AMRO BANK NV\n:25:517852257\n:28C:" + n + "/1\n:60F:C110522EUR100,00\n" +
			":61:1105240524D9,N192NONREF\n:86:GIRO 428428\n-\n:62F:C110523EUR91,00\n-\n"
	}
	in := msg("19321") + msg("19322")
	res := readAll(t, in, Options{})
	if res.final != io.EOF || len(res.records) != 2 || len(res.statements) != 2 {
		t.Fatalf("final %v, %d records in %d statements, errors %v", res.final, len(res.records), len(res.statements), res.errs)
	}
	for _, s := range res.statements {
		if !s.Balanced || s.Closing != 9100 {
			t.Errorf("statement %+v", s)
		}
	}
}
