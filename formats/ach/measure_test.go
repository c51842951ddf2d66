package ach

import (
	"bufio"
	"errors"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	moov "github.com/moov-io/ach"
)

// TestMeasurePeakMemory runs one parser over one file so that its peak
// memory can be measured from outside, as docs/decisions/ach-reader.md
// records. It runs only when ACH_MEASURE names what to do:
//
//	go test -c -o /tmp/ach.test ./formats/ach
//	ACH_MEASURE=generate ACH_MEASURE_FILE=/tmp/1m.ach ACH_MEASURE_ENTRIES=1000000 /tmp/ach.test -test.run TestMeasurePeakMemory
//	ACH_MEASURE=reader ACH_MEASURE_FILE=/tmp/1m.ach /usr/bin/time -v /tmp/ach.test -test.run TestMeasurePeakMemory -test.v
//
// with ACH_MEASURE also "moov-read" (Reader.Read) or "moov-iterator".
func TestMeasurePeakMemory(t *testing.T) {
	mode, path := os.Getenv("ACH_MEASURE"), os.Getenv("ACH_MEASURE_FILE")
	if mode == "" || path == "" {
		t.Skip("set ACH_MEASURE and ACH_MEASURE_FILE to measure a parser")
	}
	start := time.Now()
	var n int
	var err error
	switch mode {
	case "generate":
		n, err = measureGenerate(path)
	case "reader":
		n, err = measureOpen(path, measureReader)
	case "moov-read":
		n, err = measureOpen(path, measureMoovRead)
	case "moov-iterator":
		n, err = measureOpen(path, measureMoovIterator)
	default:
		t.Fatalf("ACH_MEASURE=%q: want generate, reader, moov-read or moov-iterator", mode)
	}
	if err != nil {
		t.Fatal(err)
	}
	d := time.Since(start)
	t.Logf("%s: %d entries in %v (%.0f entries/s)", mode, n, d, float64(n)/d.Seconds())
}

func measureGenerate(path string) (int, error) {
	n, err := strconv.Atoi(os.Getenv("ACH_MEASURE_ENTRIES"))
	if err != nil {
		return 0, err
	}
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	if err := WriteEntries(f, DefaultHeader(testCreated), GenerateEntries(1, n)); err != nil {
		f.Close()
		return 0, err
	}
	return n, f.Close()
}

func measureOpen(path string, read func(io.Reader) (int, error)) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return read(bufio.NewReaderSize(f, 64<<10))
}

func measureReader(r io.Reader) (int, error) {
	rd := NewReader(r, Options{Hasher: testHasher})
	n := 0
	for {
		_, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n++
	}
}

func measureMoovRead(r io.Reader) (int, error) {
	f, err := moov.NewReader(r).Read()
	n := 0
	for _, b := range f.Batches {
		n += len(b.GetEntries())
	}
	return n, err
}

func measureMoovIterator(r io.Reader) (int, error) {
	it := moov.NewIterator(r)
	n := 0
	for {
		_, ed, err := it.NextEntry()
		if err != nil || ed == nil {
			return n, err
		}
		n++
	}
}
