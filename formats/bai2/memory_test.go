package bai2

import (
	"io"
	"runtime"
	"testing"
)

// TestReaderMemoryIsFlat streams a statement of 300,000 lines (about 17 MB)
// through a pipe and checks that the live heap stays within a few megabytes
// of where it started: the reader must not hold the file or its lines.
func TestReaderMemoryIsFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 17 MB")
	}
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(Generate(pw, RandomLines(RandomOptions{Seed: 9, Lines: 300_000, Days: 3, Accounts: 5}), GenerateOptions{}))
	}()
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	base := heap()
	var peak uint64
	r := NewReader(pr, Options{Hasher: testHasher})
	n := 0
	for {
		_, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if n++; n%50_000 == 0 {
			peak = max(peak, heap())
		}
	}
	const slack = 4 << 20
	if n != 300_000 || peak > base+slack {
		t.Fatalf("%d records; live heap rose from %d to %d bytes", n, base, peak)
	}
	t.Logf("%d records; live heap %d bytes at the start, %d at the peak", n, base, peak)
}
