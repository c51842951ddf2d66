package csv

import (
	"bufio"
	"bytes"
	stdcsv "encoding/csv"
	"io"
	"testing"
)

// benchFile generates a 100,000-row file in the shape of a preset.
func benchFile(b *testing.B, preset string, quoteAll bool) []byte {
	b.Helper()
	var buf bytes.Buffer
	if _, err := Generate(&buf, GenerateOptions{Preset: preset, Rows: 100_000, Seed: 1, QuoteAll: quoteAll, SubtotalEvery: 1000, Currencies: []string{"USD", "JPY", "BHD"}}); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

func BenchmarkReader(b *testing.B) {
	for _, preset := range Presets() {
		b.Run(preset, func(b *testing.B) {
			data := benchFile(b, preset, false)
			m, err := LoadMapping(PresetPrefix + preset)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			rows := 0
			for b.Loop() {
				r, err := NewReader(bytes.NewReader(data), m, Options{FileID: "bench.csv", Hasher: testHasher})
				if err != nil {
					b.Fatal(err)
				}
				for {
					_, err := r.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					rows++
				}
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkSplit compares this package's scanner with encoding/csv on the
// same quoted file, for docs/decisions/csv-own-reader.md.
func BenchmarkSplit(b *testing.B) {
	data := benchFile(b, "signed-amount", true)
	b.Run("scanner", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			sc := newScanner(newBufReader(data), ',', 1<<16, 1<<40)
			for {
				if _, err := sc.next(); err == io.EOF {
					break
				} else if err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("encoding-csv", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			r := stdcsv.NewReader(bytes.NewReader(data))
			r.FieldsPerRecord, r.ReuseRecord = -1, true
			for {
				if _, err := r.Read(); err == io.EOF {
					break
				} else if err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

func newBufReader(data []byte) *bufio.Reader {
	return bufio.NewReaderSize(bytes.NewReader(data), bufferBytes)
}
