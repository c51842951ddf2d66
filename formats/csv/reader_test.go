package csv

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/pii"
)

const simpleMapping = `
source = "psp"
key = "id"
amount = "amount"
amount_unit = "major"
currency = "currency"
value_date = "date"
account = "account"
`

func mustMapping(t testing.TB, text string) *Mapping {
	t.Helper()
	m, err := ParseMapping([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// readAll returns the records and row errors of in, and the final error
// (nil at a clean EOF).
func readAll(t testing.TB, m *Mapping, in string, opts Options) ([]formats.Record, []*formats.ParseError, error) {
	t.Helper()
	r, err := NewReader(strings.NewReader(in), m, opts)
	if err != nil {
		return nil, nil, err
	}
	var recs []formats.Record
	var bad []*formats.ParseError
	for {
		rec, err := r.Next()
		var pe *formats.ParseError
		switch {
		case err == io.EOF:
			return recs, bad, nil
		case errors.As(err, &pe):
			bad = append(bad, pe)
		case err != nil:
			return recs, bad, err
		default:
			recs = append(recs, rec)
		}
	}
}

func opts() Options { return Options{FileID: "f.csv", Hasher: testHasher} }

func TestRowErrorsWrapSentinels(t *testing.T) {
	m := mustMapping(t, simpleMapping)
	cases := []struct {
		row   string
		want  error
		field string
	}{
		{`a,2026-11-29,12.345,USD,1234`, ErrAmount, "amount"},
		{`a,2026-11-29,,USD,1234`, ErrAmount, "amount"},
		{`a,2026-11-29,"1,000.00",USD,1234`, ErrAmount, "amount"},
		{`a,29/11/2026,1.00,USD,1234`, ErrDate, "date"},
		{`a,2026-11-29,1.00,US,1234`, ErrCurrency, "currency"},
		{`a,2026-11-29,1.00,,1234`, ErrCurrency, "currency"},
		{` ,2026-11-29,1.00,USD,1234`, ErrEmptyValue, "id"},
		{"a\x01,2026-11-29,1.00,USD,1234", ErrValue, "id"},
		{"\xff,2026-11-29,1.00,USD,1234", ErrValue, "id"},
		{`a,2026-11-29,1.00,USD,`, ErrEmptyValue, "account"},
		{`a,2026-11-29,1.00,USD`, ErrFieldCount, "account"},
		{`a,2026-11-29,1.00,USD,1234,x`, ErrFieldCount, "#6"},
		{`a,2026-11-29,1.00,USD,12"34`, ErrQuote, "account"},
	}
	for _, tc := range cases {
		t.Run(tc.row, func(t *testing.T) {
			in := "id,date,amount,currency,account\n" + tc.row + "\nok,2026-11-29,1.00,USD,1234\n"
			recs, bad, err := readAll(t, m, in, opts())
			if err != nil {
				t.Fatal(err)
			}
			if len(bad) != 1 || !errors.Is(bad[0], tc.want) || bad[0].Field != tc.field || bad[0].Line != 2 || bad[0].Offset != 32 {
				t.Fatalf("errors %v, want one %v at line 2, offset 32, field %s", bad, tc.want, tc.field)
			}
			if len(recs) != 1 || recs[0].Key != "csv:psp:ok" {
				t.Fatalf("the row after the bad one was not read: %+v", recs)
			}
		})
	}
}

func TestNoAccountNumberInRecordsOrErrors(t *testing.T) {
	m := mustMapping(t, simpleMapping)
	const secret = "9876543210987"
	in := "id,date,amount,currency,account\n" +
		"a,2026-11-29,1.00,USD," + secret + "\n" +
		"b,2026-11-29,12.345,USD," + secret + "\n" +
		"c,2026-11-29,1.00,USD," + secret + ":\x02\n"
	recs, bad, err := readAll(t, m, in, opts())
	if err != nil || len(recs) != 1 || len(bad) != 2 {
		t.Fatalf("recs %v, errors %v, final %v", recs, bad, err)
	}
	if recs[0].Account != testHasher.Account("csv:psp", secret) || recs[0].Account.Last4 != "0987" {
		t.Errorf("account = %+v, want the hash of the number under scope csv:psp", recs[0].Account)
	}
	for _, s := range []string{describe(recs[0]), bad[0].Error(), bad[1].Error()} {
		if strings.Contains(s, secret) || strings.Contains(s, secret[:8]) {
			t.Errorf("the account number leaked: %s", s)
		}
	}
}

func TestReaderRefusesBeforeReading(t *testing.T) {
	m := mustMapping(t, simpleMapping)
	header := "id,date,amount,currency,account\n"
	cases := []struct {
		name string
		in   string
		opts Options
		want error
		text string
	}{
		{"utf-16", "\xff\xfei\x00d\x00", opts(), ErrEncoding, "UTF-16"},
		{"no file id", header, Options{Hasher: testHasher}, ErrOptions, "file id"},
		{"control in file id", header, Options{FileID: "a\nb", Hasher: testHasher}, ErrOptions, "file id"},
		{"no hasher", header, Options{FileID: "f"}, ErrOptions, "Hasher"},
		{"header too long to detect", strings.Repeat("x", bufferBytes+10) + "\n", opts(), ErrDelimiter, "longer than"},
		{"no delimiter in header", "id\n", opts(), ErrDelimiter, "none of"},
		{"malformed header", "id,\"date\"x,amount\n", opts(), ErrQuote, "header (line 1, offset 0)"},
		{"only blank lines", "\n\r\n\n", opts(), ErrNoHeader, "line 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewReader(strings.NewReader(tc.in), m, tc.opts)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("err = %v, want %v mentioning %q", err, tc.want, tc.text)
			}
		})
	}
	preamble := mustMapping(t, simpleMapping+"skip_lines = 2\n")
	if _, err := NewReader(strings.NewReader("title\n"), preamble, opts()); !errors.Is(err, ErrNoHeader) || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("skip_lines past the end of the file: %v", err)
	}
	if _, err := NewReader(strings.NewReader(header), nil, opts()); !errors.Is(err, ErrMapping) {
		t.Errorf("no mapping: %v", err)
	}
	if _, err := NewReader(strings.NewReader(header), &Mapping{Source: "x"}, opts()); !errors.Is(err, ErrMapping) {
		t.Errorf("an invalid Mapping built in code: %v", err)
	}
}

func TestLimitsAreFinal(t *testing.T) {
	m := mustMapping(t, simpleMapping)
	row := "a,2026-11-29,1.00,USD,1234\n"
	in := "id,date,amount,currency,account\n" + row + row + row
	cases := []struct {
		name string
		opts Options
		text string
	}{
		{"records", Options{FileID: "f", Hasher: testHasher, Limits: formats.Limits{MaxRecords: 2}}, "line 4: more than 2 rows"},
		{"row bytes", Options{FileID: "f", Hasher: testHasher, Limits: formats.Limits{MaxLineBytes: 20}}, "line 1 (offset 0): row exceeds 20 bytes"},
		{"file bytes", Options{FileID: "f", Hasher: testHasher, MaxFileBytes: 70}, "line 3 (offset 59): file exceeds 70 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(strings.NewReader(in), m, tc.opts)
			if err == nil {
				for err == nil {
					_, err = r.Next()
				}
				if _, again := r.Next(); again != err {
					t.Errorf("a final error must repeat: %v then %v", err, again)
				}
			}
			var pe *formats.ParseError
			if !errors.Is(err, formats.ErrTooLarge) || errors.As(err, &pe) || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("err = %v, want a final ErrTooLarge naming %q", err, tc.text)
			}
		})
	}
}

func TestKeysAreStableAcrossReupload(t *testing.T) {
	m := mustMapping(t, simpleMapping)
	first := "id,date,amount,currency,account\r\na,2026-11-29,1.00,USD,1234\r\nb,2026-11-29,2.00,USD,1234\r\n"
	again := "\ufeffcurrency,id,account,amount,date\nUSD,b,1234,2.0,2026-11-29\nUSD,a,1234,1,2026-11-29\n"
	r1, _, err1 := readAll(t, m, first, opts())
	r2, _, err2 := readAll(t, m, again, Options{FileID: "other.csv", Hasher: testHasher})
	if err1 != nil || err2 != nil || len(r1) != 2 || len(r2) != 2 {
		t.Fatalf("%v %v %v %v", r1, r2, err1, err2)
	}
	if formats.Digest(&r1[0]) != formats.Digest(&r2[1]) || formats.Digest(&r1[1]) != formats.Digest(&r2[0]) {
		t.Error("a re-ordered, re-formatted re-upload must give the same digests")
	}
}

func TestSkipRecordsNeedNoValidFields(t *testing.T) {
	m := mustMapping(t, simpleMapping+"skip_column = \"id\"\nskip_values = [\"Total\"]\n")
	recs, bad, err := readAll(t, m, "id,date,amount,currency,account\nTotal,,\"1,000\"\n", opts())
	if err != nil || len(bad) != 0 || len(recs) != 1 || recs[0].Kind != formats.Skip || recs[0].Key != "csv:psp:f.csv:2" {
		t.Fatalf("recs %+v, errors %v, final %v", recs, bad, err)
	}
}

func TestZeroHasherIsDetected(t *testing.T) {
	if !(pii.Hasher{}).IsZero() || pii.New("").IsZero() {
		t.Fatal("IsZero cannot tell the zero Hasher from a built one; the check in NewReader depends on it")
	}
}
