package report

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"
)

// streamed returns r with its discrepancies yielded by a Stream, as a
// stored run's are, each a fresh copy; passes counts the readings.
func streamed(r *Report) (*Report, *int) {
	held := r.Discrepancies
	passes := 0
	s := *r
	s.Discrepancies = nil
	s.Stream = func(yield func(*Discrepancy) error) error {
		passes++
		for i := range held {
			d := held[i]
			if err := yield(&d); err != nil {
				return err
			}
		}
		return nil
	}
	return &s, &passes
}

// TestAStreamedReportRendersAsAHeldOne: every form of a report whose
// discrepancies are streamed is byte for byte the form of the same report
// holding them, and reads the stream at most twice, once to check and sum
// and once to list (an empty list is not read again). largeReport passes the listing cap, so the table and the page
// choose their breaks from the second reading.
func TestAStreamedReportRendersAsAHeldOne(t *testing.T) {
	cases := append(fixtures[:len(fixtures):len(fixtures)], struct {
		name  string
		build func() *Report
	}{"large", func() *Report { return largeReport(MaxListedBreaks + 700) }})
	for _, fx := range cases {
		for _, f := range formats {
			t.Run(fx.name+"/"+f.format, func(t *testing.T) {
				held := render(t, f.format, fx.build())
				s, passes := streamed(fx.build())
				if got := render(t, f.format, s); got != held {
					t.Errorf("the streamed report renders otherwise than the held one")
				}
				read := *passes
				if read < 1 || read > 2 {
					t.Errorf("the discrepancies were read %d times, want at most 2", read)
				}
				if s.NeedsPerson() != fx.build().NeedsPerson() || *passes != read {
					t.Errorf("NeedsPerson differs, or read the stream again (%d readings)", *passes-read)
				}
			})
		}
	}
}

// TestAStreamThatFailsWritesNothingOrStops: a stream that fails on the
// first reading writes nothing; one that fails on the second returns its
// error.
func TestAStreamThatFailsWritesNothingOrStops(t *testing.T) {
	broken := errors.New("connection lost")
	for _, failOn := range []int{1, 2} {
		for _, f := range formats {
			r, _ := streamed(fullReport())
			inner, reads := r.Stream, 0
			r.Stream = func(yield func(*Discrepancy) error) error {
				if reads++; reads == failOn {
					n := 0
					return inner(func(d *Discrepancy) error {
						if n++; n == 3 {
							return broken
						}
						return yield(d)
					})
				}
				return inner(yield)
			}
			var b bytes.Buffer
			err := Write(&b, f.format, r)
			if !errors.Is(err, broken) {
				t.Errorf("%s, failing on reading %d: err = %v, want the stream's", f.format, failOn, err)
			}
			if failOn == 1 && b.Len() != 0 {
				t.Errorf("%s: a report that could not be checked wrote %d bytes", f.format, b.Len())
			}
		}
	}
}

// TestRenderingHoldsNoMoreThanTheListedBreaks renders, in every form, a
// report of 100,000 discrepancies streamed as a stored run's are, each
// built afresh, and measures the live heap at the last one of the second
// reading: what rendering holds then must stay under a quarter of what
// holding the discrepancies takes (the table and the page keep the
// MaxListedBreaks they list, CSV and JSON none).
func TestRenderingHoldsNoMoreThanTheListedBreaks(t *testing.T) {
	const n = 100_000
	before := liveHeap()
	r := largeReport(n)
	heldBytes := liveHeap() - before
	r.Discrepancies = nil
	for _, f := range formats {
		passes, grew := 0, uint64(0)
		var base uint64
		r.Stream = func(yield func(*Discrepancy) error) error {
			passes++
			for i := range n {
				d := largeDiscrepancy(i)
				if i == n-1 && passes == 2 {
					grew = liveHeap() - min(liveHeap(), base)
				}
				if err := yield(&d); err != nil {
					return err
				}
			}
			return nil
		}
		r.sum = nil
		base = liveHeap()
		if err := Write(io.Discard, f.format, r); err != nil {
			t.Fatal(err)
		}
		if passes != 2 || grew > heldBytes/4 {
			t.Errorf("%s: the heap grew by %d KiB while rendering (%d readings), against %d KiB for the %d discrepancies held",
				f.format, grew>>10, passes, heldBytes>>10, n)
		}
		t.Logf("%s: %d KiB held while rendering, against %d KiB for the discrepancies", f.format, grew>>10, heldBytes>>10)
	}
}

// liveHeap returns the bytes the heap holds after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
