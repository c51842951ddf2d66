package report

import (
	"io"
	"testing"
)

// BenchmarkWrite renders a report of 100,000 breaks in each format. The
// table and the page list MaxListedBreaks of them; CSV and JSON write all.
// It reports discrepancies per second and output bytes per operation.
func BenchmarkWrite(b *testing.B) {
	const n = 100_000
	r := largeReport(n)
	for _, f := range formats {
		b.Run(f.format, func(b *testing.B) {
			var size countingWriter
			if err := Write(&size, f.format, r); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if err := Write(io.Discard, f.format, r); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "discrepancies/s")
		})
	}
}

// countingWriter counts the bytes written to it.
type countingWriter int

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}
