package ipm

import (
	"errors"
	"io"
	"runtime"
	"testing"
)

// TestMemoryDoesNotGrowWithTheFile streams a generated file of about 11 MB
// through the reader and checks that the live heap stays far below it: the
// reader holds one message (and one read chunk) at a time.
func TestMemoryDoesNotGrowWithTheFile(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 11 MB")
	}
	pr, pw := io.Pipe()
	go func() {
		_, err := Generate(pw, GenerateOptions{Seed: 9, Presentments: 30_000, Blocked: true, Lifecycle: true})
		pw.CloseWithError(err)
	}()
	rd, err := NewReader(pr, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	var peak uint64
	var ms runtime.MemStats
	for n := 0; ; n++ {
		_, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if n%5000 == 0 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
	}
	if peak > 8<<20 {
		t.Errorf("the live heap reached %d bytes while reading an 11 MB file", peak)
	}
}
