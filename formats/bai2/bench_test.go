package bai2

import (
	"bytes"
	"io"
	"testing"
)

// BenchmarkReader reads a generated statement of 100,000 detail lines (about
// 110,000 physical records, a tenth of them continued with an 88).
func BenchmarkReader(b *testing.B) {
	var file bytes.Buffer
	if err := Generate(&file, RandomLines(RandomOptions{Seed: 1, Lines: 100_000, Days: 5, Accounts: 20, BlankReferencePercent: 10}), GenerateOptions{}); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(file.Len()))
	b.ReportAllocs()
	var records int
	for b.Loop() {
		r := NewReader(bytes.NewReader(file.Bytes()), Options{Hasher: testHasher})
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			records++
		}
	}
	b.ReportMetric(float64(records)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(float64(records)/float64(b.N), "records/op")
}

// BenchmarkGenerate writes the same statement.
func BenchmarkGenerate(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if err := Generate(io.Discard, RandomLines(RandomOptions{Seed: 1, Lines: 100_000, Days: 5, Accounts: 20}), GenerateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(100_000*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
