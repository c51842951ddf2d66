package bai2

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/clearing-dev/clearing/formats"
)

// statement builds a valid one-account file around the given detail records,
// computing its trailers, so that tests can vary one thing at a time.
func statement(account string, details ...string) string {
	var total int64
	for _, d := range details {
		f := strings.Split(d, ",")
		var v int64
		fmt.Sscan(f[2], &v)
		total += v
	}
	n := int64(len(details))
	return fmt.Sprintf("01,SENDER,RECEIVER,260105,0800,1,,,2/\n02,RECEIVER,ORIGBANK,1,260104,,USD,2/\n03,%s,,/\n%s\n49,%d,%d/\n98,%d,1,%d/\n99,%d,1,%d/\n",
		account, strings.Join(details, "\n"), total, n+2, total, n+4, total, n+6)
}

func TestReaderEdgeCases(t *testing.T) {
	valid := statement("12345678", "16,195,100,,R1,,/")
	tests := []struct {
		name    string
		in      string
		opts    Options
		records int
		errIs   error // matched against the first ParseError, or the final error when there is none
	}{
		{"valid", valid, Options{}, 1, nil},
		{"windows line endings", strings.ReplaceAll(valid, "\n", "\r\n"), Options{}, 1, nil},
		{"byte order mark", "\xef\xbb\xbf" + valid, Options{}, 1, nil},
		{"no final newline", strings.TrimSuffix(valid, "\n"), Options{}, 1, nil},
		{"fixed-length records padded with spaces", strings.ReplaceAll(valid, "/\n", "/      \n"), Options{}, 1, nil},
		{"empty file", "", Options{}, 0, ErrStructure},
		{"blank file", "\n \n", Options{}, 0, ErrStructure},
		{"not BAI2 at all", "name,amount\nbob,12\n", Options{}, 0, ErrSyntax},
		{"line over the limit", valid, Options{Limits: formats.Limits{MaxLineBytes: 30}}, 0, formats.ErrTooLarge},
		{"more physical records than the limit", valid, Options{Limits: formats.Limits{MaxRecords: 4}}, 1, formats.ErrTooLarge},
		{"record with continuations over the limit",
			statement("12345678", "16,195,100,,R1,,"+strings.Repeat("\n88,"+strings.Repeat("T", 60), 40)),
			Options{Limits: formats.Limits{MaxLineBytes: 80}, MaxRecordBytes: 1000}, 0, formats.ErrTooLarge},
		{"unsupported type code", statement("12345678", "16,701,100,,R1,,/"), Options{}, 0, ErrTypeCode},
		{"declared custom code", statement("12345678", "16,701,100,,R1,,/"),
			Options{TypeCodes: map[int]TypeCode{701: {Name: "Loan credit", Direction: formats.Credit}}}, 1, nil},
		{"custom code with a bad direction", statement("12345678", "16,925,100,,R1,,/"),
			Options{TypeCodes: map[int]TypeCode{925: {Direction: "X"}}}, 0, ErrTypeCode},
		{"account number with a control byte", statement("1234\x015678", "16,195,100,,R1,,/"), Options{}, 0, ErrField},
		{"amount beyond int64", statement("12345678", "16,195,99999999999999999999,,R1,,/"), Options{}, 0, ErrField},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := readAll(t, tc.in, tc.opts)
			if len(res.records) != tc.records {
				t.Errorf("%d records, want %d", len(res.records), tc.records)
			}
			if tc.errIs == nil {
				if res.final != io.EOF || len(res.errs) > 0 {
					t.Fatalf("final %v, errors %v", res.final, res.errs)
				}
				return
			}
			if len(res.errs) == 0 {
				t.Fatalf("no ParseError; final %v", res.final)
			}
			if !errors.Is(res.errs[0], tc.errIs) {
				t.Errorf("first error %v, want %v", res.errs[0], tc.errIs)
			}
			if !errors.Is(res.final, ErrInvalidFile) {
				t.Errorf("final %v, want ErrInvalidFile", res.final)
			}
		})
	}
}

// TestReaderNeedsHasher guards against hashing account numbers with no
// secret when a caller forgets the Hasher.
func TestReaderNeedsHasher(t *testing.T) {
	r := NewReader(strings.NewReader(statement("12345678", "16,195,100,,R1,,/")), Options{})
	for range 2 {
		if _, err := r.Next(); !errors.Is(err, ErrNoHasher) {
			t.Fatalf("Next = %v, want ErrNoHasher", err)
		}
	}
}

// TestReaderStopsAtMaxErrors checks that a file of garbage costs a bounded
// number of errors, and that the verdict follows them.
func TestReaderStopsAtMaxErrors(t *testing.T) {
	in := statement("12345678", strings.Repeat("16,195,-1,,R1,,/\n", 50)+"16,195,1,,R2,,/")
	res := readAll(t, in, Options{MaxErrors: 10})
	var fe *FileError
	if len(res.errs) != 10 || !errors.As(res.final, &fe) || !fe.Stopped || fe.Count != 10 {
		t.Fatalf("%d errors, final %v", len(res.errs), res.final)
	}
}

// TestReaderFinalErrorIsSticky checks that a caller that keeps calling Next
// after the verdict gets the verdict again, never io.EOF.
func TestReaderFinalErrorIsSticky(t *testing.T) {
	r := NewReader(strings.NewReader("99,0,0,1/\n"), Options{Hasher: testHasher})
	var last error
	for range 5 {
		_, last = r.Next()
	}
	if !errors.Is(last, ErrInvalidFile) {
		t.Fatalf("Next after the verdict = %v", last)
	}
}

// TestReaderIOError checks that a failing source ends the read with its own
// error, not a ParseError that invites the caller to continue.
func TestReaderIOError(t *testing.T) {
	boom := errors.New("disk on fire")
	src := io.MultiReader(strings.NewReader("01,SENDER,RECEIVER,260105,0800,1,,,2/\n"), iotest.ErrReader(boom))
	r := NewReader(src, Options{Hasher: testHasher})
	_, err := r.Next()
	var pe *formats.ParseError
	if !errors.Is(err, boom) || errors.As(err, &pe) {
		t.Fatalf("Next = %v, want the source's error", err)
	}
}

// TestReaderReferenceChoice checks that Options.Reference swaps the two
// references and that the key stays on the bank reference.
func TestReaderReferenceChoice(t *testing.T) {
	in := statement("12345678", "16,451,100,,BANK1,091000010000001,ACH DEBIT/")
	for _, tc := range []struct {
		field    ReferenceField
		ref, alt string
	}{{BankReference, "BANK1", "091000010000001"}, {CustomerReference, "091000010000001", "BANK1"}} {
		res := readAll(t, in, Options{Reference: tc.field})
		if len(res.records) != 1 {
			t.Fatalf("%d records", len(res.records))
		}
		r := res.records[0]
		if r.Reference != tc.ref || r.AltReference != tc.alt || !strings.HasSuffix(r.Key, ":BANK1") {
			t.Errorf("Reference %d: %+v", tc.field, r)
		}
	}
}

// TestReaderKeepsAccountNumbersPrivate checks that no Record field, key or
// error message holds the clear account number, even when the file is bad.
func TestReaderKeepsAccountNumbersPrivate(t *testing.T) {
	const number = "987654321012"
	in := statement(number, "16,195,100,,R1,,PAYMENT FROM JANE DOE/", "16,195,-5,,R2,,/", "16,701,1,,R3,,/")
	in = strings.Replace(in, "49,", "49,9", 1)
	res := readAll(t, in, Options{})
	if len(res.records) == 0 || len(res.errs) < 3 {
		t.Fatalf("%d records, %d errors", len(res.records), len(res.errs))
	}
	dump := fmt.Sprintf("%+v %v %v", res.records, res.errs, res.final)
	for _, secret := range []string{number, number[:8], "JANE"} {
		if strings.Contains(dump, secret) {
			t.Errorf("output holds %q: %s", secret, dump)
		}
	}
	if res.records[0].Account != testHasher.Account("bai2:ORIGBANK", number) {
		t.Errorf("account %+v is not the hash scoped by the originator", res.records[0].Account)
	}
}

// TestKeysIgnoreFileLevelAttributes checks that a re-sent statement with a
// new file id, creation time, sender and record layout keeps every key and
// digest, and that another originator or as-of date changes them.
func TestKeysIgnoreFileLevelAttributes(t *testing.T) {
	base := statement("12345678", "16,195,100,,R1,,/", "16,475,200,,,,/")
	digests := func(in string) []string {
		res := readAll(t, in, Options{})
		if res.final != io.EOF {
			t.Fatalf("final %v, errors %v", res.final, res.errs)
		}
		var out []string
		for _, r := range res.records {
			out = append(out, fmt.Sprintf("%s %x", r.Key, formats.Digest(&r)))
		}
		return out
	}
	want := fmt.Sprint(digests(base))
	resent := strings.Replace(base, "01,SENDER,RECEIVER,260105,0800,1,,,2/", "01,PROCESSOR,RECEIVER,260106,1715,7,80,10,2/", 1)
	resent = strings.Replace(resent, "16,195,100,,R1,,/", "16,195,100,,R1/\n88,,NEW TEXT", 1)
	resent = strings.Replace(resent, "49,300,4/", "49,300,5/", 1)
	resent = strings.Replace(resent, "98,300,1,6/", "98,300,1,7/", 1)
	resent = strings.Replace(resent, "99,300,1,8/", "99,300,1,9/", 1)
	if got := fmt.Sprint(digests(resent)); got != want {
		t.Errorf("re-sent file changed keys or digests:\n%s\n%s", got, want)
	}
	for _, other := range []string{
		strings.Replace(base, "ORIGBANK", "OTHERBANK", 1),
		strings.Replace(base, ",260104,", ",260105,", 1),
	} {
		if got := fmt.Sprint(digests(other)); got == want {
			t.Errorf("keys did not change: %s", got)
		}
	}
}

// TestTypeCodeTable checks the classification against the specification's
// ranges, so that an edit of the tables cannot flip a direction.
func TestTypeCodeTable(t *testing.T) {
	for code := range typeCodeNames {
		tc, ok := LookupTypeCode(code)
		if !ok || tc.Name == "" {
			t.Fatalf("%03d not found", code)
		}
		var want formats.Direction // none for status, loan (700-799) and 890 codes
		switch {
		case tc.Level == LevelStatus:
		case code >= 100 && code <= 399:
			want = formats.Credit
		case code >= 400 && code <= 699:
			want = formats.Debit
		}
		if tc.Direction != want {
			t.Errorf("%03d %s: direction %q, want %q", code, tc.Name, tc.Direction, want)
		}
	}
	for _, set := range []map[int]bool{returnCodes, feeCodes, settlementCodes} {
		for code := range set {
			if _, ok := typeCodeNames[code]; !ok || code < 100 || code > 699 {
				t.Errorf("classified code %03d is not a uniform credit or debit code", code)
			}
		}
	}
	if _, ok := LookupTypeCode(925); ok {
		t.Error("customised codes must not be listed")
	}
}

func TestFileErrorMessage(t *testing.T) {
	first := &formats.ParseError{Line: 4, Offset: 99, Field: "amount", Err: fmt.Errorf("%w: amount", ErrMissingField)}
	for _, tc := range []struct {
		e    FileError
		want string
	}{
		{FileError{First: first, Count: 1}, "bai2: file is invalid: 1 error, on line 4"},
		{FileError{First: first, Count: 3, Stopped: true}, "bai2: file is invalid: 3 errors, the first on line 4; reading stopped there"},
		{FileError{}, "bai2: file is invalid"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
	var pe *formats.ParseError
	if errors.As(&FileError{First: first}, &pe) {
		t.Error("FileError must not unwrap to a ParseError, or callers would continue past it")
	}
}

var _ formats.Reader = (*Reader)(nil)
