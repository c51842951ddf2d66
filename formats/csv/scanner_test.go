package csv

import (
	"bufio"
	stdcsv "encoding/csv"
	"errors"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats"
)

// scanAll reads every row of in, recording each row or row error as text.
func scanAll(t testing.TB, in string, comma byte, maxRow int) []string {
	t.Helper()
	sc := newScanner(bufio.NewReaderSize(strings.NewReader(in), 16), comma, maxRow, 1<<20)
	var out []string
	for {
		r, err := sc.next()
		if err == io.EOF {
			return out
		}
		var re *rowError
		switch {
		case errors.As(err, &re):
			out = append(out, "error "+itoa(re.line)+"@"+itoa(re.offset)+" col "+itoa(int64(re.column)))
		case err != nil:
			return append(out, "final "+err.Error())
		default:
			out = append(out, itoa(r.line)+"@"+itoa(r.offset)+" "+strings.Join(quoteAll(r.fields), "|"))
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func quoteAll(fields []string) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = "[" + f + "]"
	}
	return out
}

func TestScannerRows(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []string
	}{
		{"plain", "a,b\n1,2\n", []string{"1@0 [a]|[b]", "2@4 [1]|[2]"}},
		{"no final newline", "a,b\n1,2", []string{"1@0 [a]|[b]", "2@4 [1]|[2]"}},
		{"crlf", "a,b\r\n1,2\r\n", []string{"1@0 [a]|[b]", "2@5 [1]|[2]"}},
		{"final cr", "a,b\r", []string{"1@0 [a]|[b]"}},
		{"lone cr is data", "a\rb,c\n", []string{"1@0 [a\rb]|[c]"}},
		{"blank lines skipped but counted", "a\n\n\r\nb\n", []string{"1@0 [a]", "4@5 [b]"}},
		{"trailing empty column", "a,b,\n", []string{"1@0 [a]|[b]|[]"}},
		{"quoted delimiter and quote", "\"x,\"\"y\"\"\",z\n", []string{"1@0 [x,\"y\"]|[z]"}},
		{"quoted field across lines", "\"one\r\ntwo\",3\nnext\n", []string{"1@0 [one\ntwo]|[3]", "3@13 [next]"}},
		{"empty quoted", "\"\",\"\"\n", []string{"1@0 []|[]"}},
		{"bare quote", "a\"b,c\nok\n", []string{"error 1@0 col 1", "2@6 [ok]"}},
		{"text after closing quote", "x,\"a\"b\nok\n", []string{"error 1@0 col 2", "2@7 [ok]"}},
		{"unterminated quote", "x\n\"abc\nmore\n", []string{"1@0 [x]", "error 2@2 col 1"}},
		{"row too long", "ab,cd\n" + strings.Repeat("x", 40) + "\n", []string{"1@0 [ab]|[cd]", "final formats: input exceeds a limit: line 2 (offset 6): row exceeds 32 bytes"}},
		{"quoted row too long across lines", "\"" + strings.Repeat("x\n", 20) + "\"\n", []string{"final formats: input exceeds a limit: line 1 (offset 0): row exceeds 32 bytes"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := scanAll(t, tc.in, ',', 32)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestScannerFileLimit(t *testing.T) {
	sc := newScanner(bufio.NewReader(strings.NewReader("a\nb\nc\n")), ',', 100, 3)
	var err error
	for err == nil {
		_, err = sc.next()
	}
	if !errors.Is(err, formats.ErrTooLarge) || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("err = %v, want ErrTooLarge naming line 2", err)
	}
}

// TestScannerMatchesEncodingCSV compares the scanner with encoding/csv's
// strict mode on inputs that stress quoting; the fuzz target FuzzScanner does
// the same on arbitrary bytes.
func TestScannerMatchesEncodingCSV(t *testing.T) {
	inputs := []string{
		"a,b,c\n1,\"2\",3\n",
		"\"a\nb\",c\r\n\r\n\"d\"\"e\",f\r\n",
		",,\n,\n\"\"\n",
		"x\r\ny\rz\r",
		"a;b\n", "\"unterminated\n", "a\"b\n",
	}
	for _, in := range inputs {
		t.Run(in, func(t *testing.T) { compareWithEncodingCSV(t, []byte(in), ',') })
	}
}

// compareWithEncodingCSV checks that both readers yield the same rows, with
// the same first lines, up to the first error, and that both see an error
// there.
func compareWithEncodingCSV(t *testing.T, in []byte, comma byte) {
	t.Helper()
	std := stdcsv.NewReader(strings.NewReader(string(in)))
	std.Comma, std.FieldsPerRecord = rune(comma), -1
	sc := newScanner(bufio.NewReaderSize(strings.NewReader(string(in)), 16), comma, 1<<20, 1<<30)
	for n := 0; ; n++ {
		want, werr := std.Read()
		got, gerr := sc.next()
		if werr != nil || gerr != nil {
			if (werr == io.EOF) != (gerr == io.EOF) {
				t.Fatalf("row %d: encoding/csv says %v, scanner says %v", n, werr, gerr)
			}
			return
		}
		if !reflect.DeepEqual(want, got.fields) {
			t.Fatalf("row %d: encoding/csv %q, scanner %q", n, want, got.fields)
		}
		if line, _ := std.FieldPos(0); int64(line) != got.line {
			t.Fatalf("row %d: encoding/csv starts at line %d, scanner at %d", n, line, got.line)
		}
	}
}
