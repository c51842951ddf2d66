package iso8583

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/pii"
)

// testNow is the day the tests read files on; generated files start on
// 2026-11-28.
var testNow = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

var testHasher = pii.New("iso8583-test-secret")

func testOptions(framing string) Options {
	return Options{Framing: framing, Hasher: testHasher, Now: func() time.Time { return testNow }}
}

// result is everything one pass of a Reader returned.
type result struct {
	records []formats.Record
	errs    []error // every *formats.ParseError, in order
	final   error   // io.EOF or the final error
}

// readAll reads data to its final error. It fails the test when the reader
// keeps going after a final error or returns both a record and an error.
func readAll(t testing.TB, data []byte, opts Options) result {
	t.Helper()
	return readFrom(t, bytes.NewReader(data), opts)
}

func readFrom(t testing.TB, r io.Reader, opts Options) result {
	t.Helper()
	rd, err := NewReader(r, opts)
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	var res result
	for i := 0; ; i++ {
		if i > 10_000_000 {
			t.Fatal("the reader does not end")
		}
		rec, err := rd.Next()
		var pe *formats.ParseError
		switch {
		case err == nil:
			res.records = append(res.records, rec)
		case errors.As(err, &pe):
			if rec.Kind != "" {
				t.Fatalf("a record (%+v) came with an error: %v", rec, err)
			}
			res.errs = append(res.errs, err)
		default:
			res.final = err
			if _, again := rd.Next(); again != err {
				t.Fatalf("the final error changed: %v, then %v", err, again)
			}
			return res
		}
	}
}

// write frames messages with the default spec.
func write(t testing.TB, framing string, msgs ...Message) []byte {
	t.Helper()
	return writeSpec(t, framing, DefaultSpec, msgs...)
}

func writeSpec(t testing.TB, framing, specName string, msgs ...Message) []byte {
	t.Helper()
	spec, err := LoadSpec(specName)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, framing, spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if err := w.Write(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// generated returns a generated file.
func generated(t testing.TB, framing string, seed uint64, n int) ([]byte, GenerateSummary) {
	t.Helper()
	var buf bytes.Buffer
	sum, err := Generate(&buf, GenerateOptions{Seed: seed, Messages: n, Framing: framing})
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), sum
}

// testPAN is a test card number; tests look for it in every output.
const testPAN = "4761739001010119"

// purchase is a valid 0200 of 10.00 USD.
func purchase() Txn {
	at := time.Date(2026, 11, 29, 14, 30, 5, 0, time.UTC)
	return Txn{
		MTI:            "0200",
		PAN:            testPAN,
		ProcessingCode: "000000",
		Amount:         1000,
		Transmitted:    at,
		STAN:           "000123",
		Settlement:     at.AddDate(0, 0, 1),
		Acquirer:       "00417",
		RRN:            "633312345678",
		Currency:       "840",
	}
}

// with returns m with data element id set to v, or removed when v is "-".
func with(m Message, id int, v string) Message {
	f := make(map[int]string, len(m.Fields)+1)
	for k, x := range m.Fields {
		f[k] = x
	}
	if v == "-" {
		delete(f, id)
	} else {
		f[id] = v
	}
	return Message{MTI: m.MTI, Fields: f}
}

func withMTI(m Message, v string) Message {
	m = with(m, 0, "-")
	m.MTI = v
	return m
}

// one reads a single message written raw and returns its record or error.
func one(t *testing.T, m Message) (formats.Record, error) {
	t.Helper()
	res := readAll(t, write(t, FramingRaw, m), testOptions(FramingRaw))
	if len(res.errs) > 0 {
		return formats.Record{}, res.errs[0]
	}
	if !errors.Is(res.final, io.EOF) {
		return formats.Record{}, res.final
	}
	if len(res.records) != 1 {
		t.Fatalf("%d records from one message", len(res.records))
	}
	return res.records[0], nil
}
