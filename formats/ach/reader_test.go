package ach

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/pii"
)

// without returns ls without the lines numbered drop (1-based).
func without(ls []string, drop ...int) []string {
	var out []string
	for i, l := range ls {
		if !slices.Contains(drop, i+1) {
			out = append(out, l)
		}
	}
	return out
}

// inserted returns ls with extra inserted before line at (1-based).
func inserted(ls []string, at int, extra ...string) []string {
	out := slices.Clone(ls[:at-1])
	out = append(out, extra...)
	return append(out, ls[at-1:]...)
}

// replaced returns ls with line n (1-based) replaced by f of it.
func replaced(ls []string, n int, f func(string) string) []string {
	out := slices.Clone(ls)
	out[n-1] = f(out[n-1])
	return out
}

// TestReaderRejects checks that each kind of damage to a valid file is
// reported as a ParseError of the right kind on the right line, that the
// reader continues past it, and that the file is then rejected as a whole.
func TestReaderRejects(t *testing.T) {
	base := lines(testFile(t, testEntries()))
	addenda05 := "705" + strings.Repeat(" ", 80) + "0001" + "0000001"
	cases := []struct {
		name  string
		data  []byte
		kind  error
		line  int64
		field string
	}{
		{"no file control", join(without(base, 10)), ErrTruncated, 9, ""},
		{"no batch control and no file control", join(without(base, 9, 10)), ErrTruncated, 8, ""},
		{"batch control missing between batches", join(without(base, 5)), ErrStructure, 5, ""},
		{"two file controls", join(append(slices.Clone(base), base[9])), ErrStructure, 11, ""},
		{"second file header", join(inserted(base, 2, base[0])), ErrStructure, 2, ""},
		{"no file header", join(without(base, 1)), formats.ErrNotThisFormat, 1, ""},
		{"entry outside a batch", join(inserted(base, 6, base[2])), ErrStructure, 6, ""},
		{"addenda the entry did not announce", join(inserted(base, 4, addenda05)), ErrStructure, 4, ""},
		{"indicator without addenda", join(replaced(base, 3, func(l string) string { return setField(l, 78, "1") })), ErrStructure, 3, "AddendaRecordIndicator"},
		{"text after the file control", join(append(slices.Clone(base), "hello")), ErrStructure, 11, ""},
		{"filler before the file control", join(inserted(base, 10, fillerRecord)), ErrStructure, 10, ""},
		{"batch debit total", join(replaced(base, 5, func(l string) string { return setField(l, 20, "000000002600") })), ErrControl, 5, "TotalDebitEntryDollarAmount"},
		{"batch control numbers another batch", join(replaced(base, 5, func(l string) string { return setField(l, 87, "0000009") })), ErrControl, 5, "BatchNumber"},
		{"batch control's number is not one", join(replaced(base, 5, func(l string) string { return setField(l, 87, "000/001") })), ErrControl, 5, "BatchNumber"},
		{"batch count", join(replaced(base, 5, func(l string) string { return setField(l, 4, "000003") })), ErrControl, 5, "EntryAddendaCount"},
		{"batch entry hash", join(replaced(base, 5, func(l string) string { return setField(l, 10, "0000000001") })), ErrControl, 5, "EntryHash"},
		{"batch company", join(replaced(base, 5, func(l string) string { return setField(l, 44, "1234567899") })), ErrControl, 5, "CompanyIdentification"},
		{"file credit total", join(replaced(base, 10, func(l string) string { return setField(l, 43, "000000150101") })), ErrControl, 10, "TotalCreditEntryDollarAmountInFile"},
		{"file batch count", join(replaced(base, 10, func(l string) string { return setField(l, 1, "000003") })), ErrControl, 10, "BatchCount"},
		{"amount not a number", join(replaced(base, 3, func(l string) string { return setField(l, 29, "00001X0000") })), ErrField, 3, "Amount"},
		{"amount with a sign", join(replaced(base, 3, func(l string) string { return setField(l, 29, "+000150000") })), ErrField, 3, "Amount"},
		{"trace numbers out of order", join(append(append(slices.Clone(base[:2]), base[3], base[2]), base[4:]...)), ErrField, 4, "TraceNumber"},
		{"bad check digit", join(replaced(base, 3, func(l string) string { return setField(l, 11, "5") })), ErrField, 3, "RDFIIdentification"},
		{"invalid UTF-8", join(replaced(base, 3, func(l string) string { return setField(l, 30, "\xff") })), ErrNotText, 3, ""},
		{"control character", join(replaced(base, 3, func(l string) string { return setField(l, 30, "\t") })), ErrNotText, 3, ""},
		{"characters after a record", join(replaced(base, 3, func(l string) string { return l + "XYZ" })), ErrLineLength, 3, ""},
		{"RTF wrapper", append([]byte("{\\rtf1\\ansi\\ansicpg1252\n"), join(base)...), formats.ErrNotThisFormat, 1, ""},
		{"empty", nil, formats.ErrNotThisFormat, 1, ""},
		{"effective date not a date", join(replaced(base, 2, func(l string) string { return setField(l, 69, "261332") })), ErrField, 2, "EffectiveEntryDate"},
		{"effective date blank for forward entries", join(replaced(base, 2, func(l string) string { return setField(l, 69, "000000") })), ErrField, 3, "EffectiveEntryDate"},
		{"company identification with a colon", join(replaced(base, 2, func(l string) string { return setField(l, 40, "12345:7890") })), ErrField, 2, "CompanyIdentification"},
		{"unknown record type", join(inserted(base, 3, "X"+strings.Repeat(" ", 93))), ErrStructure, 3, ""},
		{"batch without entries", join(without(base, 7, 8)), ErrStructure, 7, ""},
		{"return code without addenda", join(replaced(base, 3, func(l string) string { return setField(l, 1, "21") })), ErrField, 3, "TransactionCode"},
		{"unknown addenda type", join(inserted(replaced(base, 3, func(l string) string { return setField(l, 78, "1") }), 4, "708"+addenda05[3:])), ErrStructure, 4, "TypeCode"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := readAll(t, tc.data, Options{})
			if !errors.Is(res.final, ErrInvalidFile) {
				t.Fatalf("final error %v, want ErrInvalidFile", res.final)
			}
			for _, pe := range res.errs {
				if pe.Line < 1 || pe.Offset < 0 || pe.Offset >= int64(len(tc.data))+1 {
					t.Errorf("error without a place in the file: %v", pe)
				}
				if errors.Is(pe, tc.kind) && pe.Line == tc.line && (tc.field == "" || pe.Field == tc.field) {
					return
				}
			}
			t.Fatalf("no %v error on line %d (field %q); got %v", tc.kind, tc.line, tc.field, res.errs)
		})
	}
}

// TestReaderAccepts checks the layouts that moov-io/ach reads and so must
// this reader, with the same records as the plain file.
func TestReaderAccepts(t *testing.T) {
	plain := testFile(t, testEntries())
	base := lines(plain)
	want := mustRead(t, plain)
	if len(want) != 4 {
		t.Fatalf("%d records from the base file, want 4", len(want))
	}
	trimmed := make([]string, len(base))
	padded := make([]string, len(base))
	for i, l := range base {
		trimmed[i] = strings.TrimRight(l, " ")
		padded[i] = l + "      "
	}
	cases := []struct {
		name string
		data []byte
	}{
		{"CRLF line breaks", []byte(strings.Join(base, "\r\n") + "\r\n")},
		{"CR line breaks", []byte(strings.Join(base, "\r"))},
		{"no line break at the end", []byte(strings.Join(base, "\n"))},
		{"no line breaks at all", []byte(strings.Join(base, ""))},
		{"trailing spaces trimmed", join(trimmed)},
		{"trailing spaces added", join(padded)},
		{"blank lines", join(inserted(inserted(base, 3, ""), 7, "   "))},
		{"byte order mark", append([]byte("\xef\xbb\xbf"), plain...)},
		{"filler after the file control", join(append(slices.Clone(base), fillerRecord, fillerRecord))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := mustRead(t, tc.data)
			if len(got) != len(want) {
				t.Fatalf("%d records, want %d", len(got), len(want))
			}
			for i := range got {
				g, w := got[i], want[i]
				g.Line, g.Offset, w.Line, w.Offset = 0, 0, 0, 0
				if g.Key != w.Key || formats.Digest(&g) != formats.Digest(&w) || g.Detail != w.Detail || g.Kind != w.Kind {
					t.Errorf("record %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

// TestReaderPositions checks that records and errors name the line and
// byte offset of their entry, with CRLF line breaks counted.
func TestReaderPositions(t *testing.T) {
	base := lines(testFile(t, testEntries()))
	data := []byte(strings.Join(base, "\r\n") + "\r\n")
	recs := mustRead(t, data)
	wantLines := []int64{3, 4, 7, 8}
	for i, rec := range recs {
		if rec.Line != wantLines[i] || rec.Offset != (wantLines[i]-1)*96 {
			t.Errorf("record %d at line %d offset %d, want line %d offset %d", i, rec.Line, rec.Offset, wantLines[i], (wantLines[i]-1)*96)
		}
	}
	flat := []byte(strings.Join(base, ""))
	for i, rec := range mustRead(t, flat) {
		if rec.Line != 1 || rec.Offset != (wantLines[i]-1)*94 {
			t.Errorf("unbroken file: record %d at line %d offset %d", i, rec.Line, rec.Offset)
		}
	}
}

// TestReaderContinues checks that one pass reports every bad entry and that
// the good entries around them are still read.
func TestReaderContinues(t *testing.T) {
	base := lines(testFile(t, testEntries()))
	bad := replaced(replaced(base, 3, func(l string) string { return setField(l, 29, "ABCDEFGHIJ") }),
		7, func(l string) string { return setField(l, 29, "??????????") })
	res := readAll(t, join(bad), Options{})
	if len(res.errs) != 2 || res.errs[0].Line != 3 || res.errs[1].Line != 7 {
		t.Fatalf("errors %v, want one on line 3 and one on line 7", res.errs)
	}
	if len(res.recs) != 2 {
		t.Fatalf("%d records, want the 2 good ones", len(res.recs))
	}
	if !errors.Is(res.final, ErrInvalidFile) {
		t.Fatalf("final %v, want ErrInvalidFile", res.final)
	}
}

// TestReaderLimits checks Limits.MaxRecords and Limits.MaxLineBytes.
func TestReaderLimits(t *testing.T) {
	data := testFile(t, testEntries())
	cases := []struct {
		name   string
		data   []byte
		limits formats.Limits
	}{
		{"records", data, formats.Limits{MaxRecords: 9}},
		{"line bytes", data, formats.Limits{MaxLineBytes: 90}},
		{"unbroken file", bytes.ReplaceAll(data, []byte("\n"), nil), formats.Limits{MaxLineBytes: 500}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := readAll(t, tc.data, Options{Limits: tc.limits})
			if len(res.errs) != 1 || !errors.Is(res.errs[0], formats.ErrTooLarge) || res.errs[0].Line < 1 {
				t.Fatalf("errors %v, want one ErrTooLarge with a line", res.errs)
			}
			if !errors.Is(res.final, ErrInvalidFile) {
				t.Fatalf("final %v, want ErrInvalidFile", res.final)
			}
		})
	}
	if res := readAll(t, data, Options{Limits: formats.Limits{MaxRecords: 10, MaxLineBytes: 94}}); len(res.errs) > 0 {
		t.Fatalf("a file exactly at the limits: %v", res.errs)
	}
}

// TestReaderNeedsHasher checks that a Reader without a Hasher refuses to
// read rather than hash account numbers with an empty key.
func TestReaderNeedsHasher(t *testing.T) {
	rd := NewReader(bytes.NewReader(testFile(t, testEntries())), Options{Hasher: pii.Hasher{}})
	for range 2 {
		if _, err := rd.Next(); !errors.Is(err, ErrNoHasher) {
			t.Fatalf("Next with the zero Hasher: %v, want ErrNoHasher", err)
		}
	}
}

// TestReaderEndsOnce checks that Next keeps returning io.EOF at the end.
func TestReaderEndsOnce(t *testing.T) {
	rd := NewReader(bytes.NewReader(testFile(t, testEntries())), Options{Hasher: testHasher})
	n := 0
	for {
		_, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if _, err := rd.Next(); !errors.Is(err, io.EOF) || n != 4 {
		t.Fatalf("after the end: %v with %d records", err, n)
	}
}

// TestReaderRegressions replays inputs that fuzzing found, each named for
// what it guards.
func TestReaderRegressions(t *testing.T) {
	cases := []struct {
		name string
		data string
		kind error
		line int64
	}{
		{
			// A return without an effective entry date is dated by the
			// file creation date; with a broken file header there is none,
			// and the entry must fail rather than carry a zero date.
			"undated return after a broken file header",
			"1\n52000000000000010000000000000000000000000000000010PPD0000010000000000000000000123138010\n" +
				"6211210428820000000000000000000000000000000000000000000000000001000000000000001231380100000000" +
				"799R01" + strings.Repeat("0", 88),
			ErrField, 3,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := readAll(t, []byte(tc.data), Options{})
			for _, rec := range res.recs {
				if rec.ValueDate.IsZero() {
					t.Fatalf("a record without a value date: %+v", rec)
				}
			}
			expectError(t, res, tc.kind, tc.line)
		})
	}
}

// TestReaderRejectsAddenda checks the rules on addenda of returns, IAT and
// ADV entries, and on mixing ADV with other batches.
func TestReaderRejectsAddenda(t *testing.T) {
	entries := testEntries()
	h := DefaultHeader(testCreated)
	// Lines: 1 file header, 2 batch header, 3 entry, 4 addenda 99, 5 batch
	// control, 6 file control.
	ret := lines(write(t, func(w io.Writer) error {
		return WriteReturns(w, h, slices.Values([]Return{ReturnOf(entries[0], "R01", 1)}))
	}))
	// Lines: 1, 2, 3 entry, 4-10 addenda 10 to 16, 11 batch control, 12.
	iat := lines(write(t, func(w io.Writer) error { return WriteIAT(w, h, slices.Values(entries[:1])) }))
	// Lines: 1, 2, 3 entry, 4 batch control, 5 file control.
	adv := lines(write(t, func(w io.Writer) error {
		return WriteAdvices(w, h, slices.Values([]Advice{{CompanyID: "1234567890", CompanyName: "ACME",
			EffectiveDate: entries[0].EffectiveDate, ODFI: "12104288", TransactionCode: 81, Amount: 5,
			RDFI: "231380104", Account: "12345678", Operator: "01100001", JulianDay: 61, Sequence: 1}}))
	}))
	std := lines(testFile(t, entries))
	cases := []struct {
		name  string
		data  []byte
		kind  error
		line  int64
		field string
	}{
		{"two addenda 99", join(inserted(ret, 5, ret[3])), ErrStructure, 5, "TypeCode"},
		{"original trace not a number", join(replaced(ret, 4, func(l string) string { return setField(l, 6, "12104288000000X") })), ErrField, 4, "OriginalTrace"},
		{"IAT without addenda 16", join(without(iat, 10)), ErrField, 3, "Addenda16"},
		{"IAT addenda out of order", join(append(append(slices.Clone(iat[:3]), iat[4], iat[3]), iat[5:]...)), ErrStructure, 5, "TypeCode"},
		{"IAT amounts in no dollar currency", join(replaced(iat, 2, func(l string) string { return setField(l, 63, "CADEUR") })), ErrField, 2, "ISODestinationCurrencyCode"},
		{"ADV addenda", join(inserted(replaced(adv, 3, func(l string) string { return setField(l, 78, "1") }), 4, ret[3])), ErrUnsupported, 4, ""},
		{"ADV and other batches", join(append(append(slices.Clone(adv[:4]), std[1:5]...), adv[4:]...)), ErrStructure, 5, "StandardEntryClassCode"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := readAll(t, tc.data, Options{})
			for _, pe := range res.errs {
				if errors.Is(pe, tc.kind) && pe.Line == tc.line && (tc.field == "" || pe.Field == tc.field) {
					if !errors.Is(res.final, ErrInvalidFile) {
						t.Fatalf("final %v, want ErrInvalidFile", res.final)
					}
					return
				}
			}
			t.Fatalf("no %v error on line %d (field %q); got %v", tc.kind, tc.line, tc.field, res.errs)
		})
	}
}
