package ipm

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/pii"
)

var testHasher = pii.New("ipm-test-secret")

func testOptions() Options { return Options{Hasher: testHasher} }

// result is everything one reading of a file returned.
type result struct {
	recs  []formats.Record
	errs  []error // ParseErrors, in order
	final error   // the last error: io.EOF when the file read whole
	rd    *Reader
}

func (r *result) ok() bool { return len(r.errs) == 0 && errors.Is(r.final, io.EOF) }

func readAll(t testing.TB, data []byte, opts Options) result {
	t.Helper()
	rd, err := NewReader(bytes.NewReader(data), opts)
	if err != nil {
		t.Fatal(err)
	}
	res := result{rd: rd}
	for i := 0; i < len(data)+10; i++ {
		rec, err := rd.Next()
		if err == nil {
			res.recs = append(res.recs, rec)
			continue
		}
		var pe *formats.ParseError
		if errors.As(err, &pe) {
			res.errs = append(res.errs, err)
			continue
		}
		res.final = err
		return res
	}
	t.Fatalf("no end after %d results", len(data)+10)
	return res
}

func generate(t testing.TB, opts GenerateOptions) ([]byte, GenerateSummary) {
	t.Helper()
	var b bytes.Buffer
	sum, err := Generate(&b, opts)
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), sum
}

func countKinds(recs []formats.Record) map[formats.Kind]int64 {
	n := map[formats.Kind]int64{}
	for _, r := range recs {
		n[r.Kind]++
	}
	return n
}

// writeFile writes messages with a Writer.
func writeFile(t testing.TB, blocked bool, enc string, msgs ...Message) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := NewWriter(&b, blocked, enc)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if err := w.Write(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
