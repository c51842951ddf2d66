package ipm

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats"
)

// fuzzSeeds are generated files of each blocking and encoding, and the
// corpus files when CLEARING_CORPUS names it.
func fuzzSeeds(f *testing.F) [][]byte {
	var seeds [][]byte
	for _, blocked := range []bool{true, false} {
		for _, enc := range Encodings() {
			d, _ := generate(f, GenerateOptions{Seed: 1, Presentments: 3, Blocked: blocked, Encoding: enc, Lifecycle: true})
			seeds = append(seeds, d)
		}
	}
	if root := os.Getenv("CLEARING_CORPUS"); root != "" {
		paths, _ := filepath.Glob(filepath.Join(root, "ipm", "*.ipm"))
		for _, p := range paths {
			if d, err := os.ReadFile(p); err == nil && len(d) < 32<<10 {
				seeds = append(seeds, d)
			}
		}
	}
	return append(seeds, []byte("0105003abc0122001P"), nil)
}

// FuzzFraming feeds arbitrary bytes to the layers under the message
// decoder: the unblocker and the VBS framer (mode 0 unblocked, 1 blocked,
// in pieces of any size), the PDS splitter (mode 2), and the whole reader
// with detection (mode 3). None may panic or loop; every frame must lie
// inside the input; a PDS split must give back the bytes it split; every
// error of the reader must name an offset inside the file, and no record
// may break the Record contract.
func FuzzFraming(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		for mode := byte(0); mode < 4; mode++ {
			f.Add(s, mode, byte(7))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, mode, piece byte) {
		switch mode % 4 {
		case 0, 1:
			fuzzFramers(t, data, mode%4 == 1, int(piece)+1)
		case 2:
			fuzzPDS(t, string(data))
		default:
			fuzzReader(t, data)
		}
	})
}

func fuzzFramers(t *testing.T, data []byte, blocked bool, piece int) {
	fill := func(byte) bool { return false }
	if blocked {
		fill = isFill
	}
	fr := newVBSFramer(4<<10, fill)
	var frames, errs int
	var total int64
	emit := func(f frame) {
		if f.err != nil {
			errs++
			return
		}
		frames++
		total += int64(len(f.body)) + prefixBytes
		if f.off < 0 || f.off+int64(len(f.body))+prefixBytes > int64(len(data)) {
			t.Fatalf("a frame at %d of %d bytes lies outside %d bytes", f.off, len(f.body), len(data))
		}
	}
	feed := func(p []byte) { fr.feed(p, emit) }
	var ub *unblocker
	if blocked {
		ub = &unblocker{next: feed}
	}
	for p := data; len(p) > 0; {
		k := min(piece, len(p))
		if ub != nil {
			ub.feed(p[:k])
		} else {
			feed(p[:k])
		}
		p = p[k:]
	}
	fr.finish(emit)
	if errs > 1 || total > int64(len(data)) || (errs == 0 && !fr.ended) {
		t.Fatalf("%d frames, %d errors, %d bytes framed of %d, ended %v", frames, errs, total, len(data), fr.ended)
	}
}

func fuzzPDS(t *testing.T, data string) {
	var b strings.Builder
	err := splitPDS(data, func(tag, v string) error {
		b.WriteString(tag)
		b.WriteString(strings.Repeat("0", 3-len(itoa(len([]rune(v))))) + itoa(len([]rune(v))))
		b.WriteString(v)
		return nil
	})
	if err == nil && b.String() != data {
		t.Fatalf("split and joined %q, got %q", data, b.String())
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var s []byte
	for ; n > 0; n /= 10 {
		s = append([]byte{byte('0' + n%10)}, s...)
	}
	return string(s)
}

func fuzzReader(t *testing.T, data []byte) {
	opts := testOptions()
	opts.Limits = formats.Limits{MaxLineBytes: 8 << 10, MaxRecords: 2000}
	rd, err := NewReader(bytes.NewReader(data), opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		if i > len(data)+10 {
			t.Fatalf("%d results from %d bytes", i, len(data))
		}
		rec, err := rd.Next()
		if err == nil {
			if rec.Amount < 0 || rec.Amount > formats.MaxAmountMinor || rec.Line < 1 || rec.Offset < 0 || rec.Offset >= int64(len(data)) {
				t.Fatalf("record %+v breaks the contract", rec)
			}
			if rec.Kind != formats.Skip && rec.Kind != formats.Notice && (rec.Key == "" || rec.Currency == "" || rec.ValueDate.IsZero()) {
				t.Fatalf("record %+v has no key, currency or date", rec)
			}
			continue
		}
		var pe *formats.ParseError
		if !errors.As(err, &pe) {
			return
		}
		if pe.Offset < 0 || pe.Offset > int64(len(data)) {
			t.Fatalf("error %v names offset %d of a %d-byte file", err, pe.Offset, len(data))
		}
	}
}
