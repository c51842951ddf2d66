package iso8583

import (
	"bytes"
	"io"
	"runtime"
	"testing"
)

// benchMessages is the size of the generated benchmark file.
const benchMessages = 100_000

var benchFiles = map[string][]byte{}

func benchFile(b *testing.B, framing string) []byte {
	if data, ok := benchFiles[framing]; ok {
		return data
	}
	var buf bytes.Buffer
	if _, err := Generate(&buf, GenerateOptions{Seed: 1, Messages: benchMessages, Framing: framing}); err != nil {
		b.Fatal(err)
	}
	benchFiles[framing] = buf.Bytes()
	return buf.Bytes()
}

// BenchmarkReader reads a generated 100,000-message file in each framing,
// given and detected.
func BenchmarkReader(b *testing.B) {
	for _, framing := range Framings()[:4] {
		for _, given := range []bool{true, false} {
			name := framing
			if !given {
				name += "/detected"
			}
			b.Run(name, func(b *testing.B) {
				data := benchFile(b, framing)
				opts := testOptions(framing)
				if !given {
					opts.Framing = ""
				}
				b.SetBytes(int64(len(data)))
				b.ReportAllocs()
				var n int64
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				cpu := cpuTime()
				for b.Loop() {
					n = 0
					rd, err := NewReader(bytes.NewReader(data), opts)
					if err != nil {
						b.Fatal(err)
					}
					for {
						_, err := rd.Next()
						if err == io.EOF {
							break
						}
						if err != nil {
							b.Fatal(err)
						}
						n++
					}
				}
				cpu = cpuTime() - cpu
				runtime.ReadMemStats(&after)
				if n != benchMessages {
					b.Fatalf("%d records", n)
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "records/s")
				b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(n*int64(b.N)), "allocs/record")
				if cpu > 0 {
					b.ReportMetric(float64(cpu.Nanoseconds())/float64(n*int64(b.N)), "cpu-ns/record")
				}
			})
		}
	}
}

// BenchmarkGenerate writes a 100,000-message rdw file.
func BenchmarkGenerate(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Generate(io.Discard, GenerateOptions{Seed: 1, Messages: benchMessages, Framing: FramingRDW}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchMessages)*float64(b.N)/b.Elapsed().Seconds(), "messages/s")
}
