package ach

import (
	"bytes"
	"errors"
	"io"
	"testing"

	moov "github.com/moov-io/ach"
)

// benchEntries is the size of the benchmark file.
const benchEntries = 100_000

// benchFile returns a generated file of benchEntries entries in batches of
// 1,000.
func benchFile(b *testing.B) []byte {
	b.Helper()
	return write(b, func(w io.Writer) error {
		return WriteEntries(w, DefaultHeader(testCreated), GenerateEntries(1, benchEntries))
	})
}

// BenchmarkReader reads a generated file of 100,000 entries.
func BenchmarkReader(b *testing.B) {
	data := benchFile(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		rd := NewReader(bytes.NewReader(data), Options{Hasher: testHasher})
		for {
			_, err := rd.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkMoovRead reads the same file with moov-io/ach's Reader.Read, which
// builds the whole File in memory, for comparison (docs/decisions/ach-reader.md).
func BenchmarkMoovRead(b *testing.B) {
	data := benchFile(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		f, err := moov.NewReader(bytes.NewReader(data)).Read()
		if err != nil || len(f.Batches) != benchEntries/DefaultBatchSize {
			b.Fatalf("%v: %d batches", err, len(f.Batches))
		}
	}
	b.ReportMetric(float64(benchEntries*b.N)/b.Elapsed().Seconds(), "entries/s")
}

// BenchmarkMoovIterator reads the same file with moov-io/ach's Iterator, for
// comparison.
func BenchmarkMoovIterator(b *testing.B) {
	data := benchFile(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		it := moov.NewIterator(bytes.NewReader(data))
		n := 0
		for {
			_, ed, err := it.NextEntry()
			if err != nil {
				b.Fatal(err)
			}
			if ed == nil {
				break
			}
			n++
		}
		if n != benchEntries {
			b.Fatalf("%d entries", n)
		}
	}
	b.ReportMetric(float64(benchEntries*b.N)/b.Elapsed().Seconds(), "entries/s")
}
