package ach

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	moov "github.com/moov-io/ach"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/pii"
)

// testHasher is the Hasher of every test: fixed, so that account IDs are
// reproducible in golden files.
var testHasher = pii.New("ach-test-key")

// testCreated is the creation time of generated test files.
var testCreated = time.Date(2026, time.March, 1, 10, 30, 0, 0, time.UTC)

// readResult is everything a Reader returned for one input.
type readResult struct {
	recs  []formats.Record
	errs  []*formats.ParseError
	final error
}

// readAll reads data to the end, continuing past ParseErrors.
func readAll(t testing.TB, data []byte, opts Options) readResult {
	t.Helper()
	if zeroHasher(opts.Hasher) {
		opts.Hasher = testHasher
	}
	rd := NewReader(bytes.NewReader(data), opts)
	var res readResult
	for range 10*len(data) + 10 {
		rec, err := rd.Next()
		var pe *formats.ParseError
		switch {
		case err == nil:
			res.recs = append(res.recs, rec)
		case errors.As(err, &pe):
			res.errs = append(res.errs, pe)
		default:
			res.final = err
			return res
		}
	}
	t.Fatalf("the reader did not end")
	return res
}

// mustRead reads data that must be accepted whole.
func mustRead(t testing.TB, data []byte) []formats.Record {
	t.Helper()
	res := readAll(t, data, Options{})
	if len(res.errs) > 0 || !errors.Is(res.final, io.EOF) {
		t.Fatalf("read failed: final %v, errors %v", res.final, res.errs)
	}
	return res.recs
}

// write runs a generator writer into a buffer.
func write(t testing.TB, f func(io.Writer) error) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := f(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// testEntries are four hand-made forward entries of one company and date.
func testEntries() []Entry {
	base := Entry{SEC: moov.PPD, CompanyID: "1234567890", CompanyName: "ACME PAYROLL",
		EffectiveDate: time.Date(2026, time.March, 2, 0, 0, 0, 0, time.UTC), ODFI: "12104288"}
	out := make([]Entry, 4)
	specs := []struct {
		code    int
		amount  int64
		rdfi    string
		account string
	}{
		{22, 150000, "231380104", "987654321"},
		{27, 2599, "091000019", "55501234"},
		{32, 100, "231380104", "1122334455"},
		{23, 0, "091000019", "77889900"},
	}
	for i, s := range specs {
		e := base
		e.Trace = "12104288000000" + string(rune('1'+i))
		e.TransactionCode, e.Amount, e.RDFI, e.Account = s.code, s.amount, s.rdfi, s.account
		e.Name = "CUSTOMER " + string(rune('A'+i))
		out[i] = e
	}
	return out
}

// testFile writes entries with batches of two: lines 1 file header, 2 batch
// header, 3-4 entries, 5 batch control, 6 batch header, 7-8 entries, 9
// batch control, 10 file control.
func testFile(t testing.TB, entries []Entry) []byte {
	t.Helper()
	h := DefaultHeader(testCreated)
	h.BatchSize = 2
	return write(t, func(w io.Writer) error { return WriteEntries(w, h, slices.Values(entries)) })
}

// lines splits a file into its lines, without line breaks.
func lines(data []byte) []string {
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// join joins lines into a file with LF line breaks.
func join(ls []string) []byte {
	return []byte(strings.Join(ls, "\n") + "\n")
}

// setField replaces the characters [from, to) of a record.
func setField(line string, from int, value string) string {
	return line[:from] + value + line[from+len(value):]
}
