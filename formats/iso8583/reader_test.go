package iso8583

import (
	"bytes"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/clearing-dev/clearing/formats"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files in testdata")

// render is one record per line, for golden files and comparisons.
func render(rec formats.Record, withOffset bool) string {
	d := formats.Digest(&rec)
	s := fmt.Sprintf("%d %s key=%s ref=%s alt=%s %d %s %s %s card=%s digest=%x %q",
		rec.Line, rec.Kind, rec.Key, rec.Reference, rec.AltReference, rec.Amount, rec.Currency, rec.Direction,
		rec.ValueDate.Format("2006-01-02"), rec.Account.Last4, d[:6], rec.Detail)
	if rec.Link != nil {
		s += fmt.Sprintf(" link=%+v", *rec.Link)
	}
	if withOffset {
		s = fmt.Sprintf("@%d ", rec.Offset) + s
	}
	return s
}

func TestGolden(t *testing.T) {
	data, _ := generated(t, FramingRDW, 1, 80)
	res := readAll(t, data, testOptions(""))
	if res.final != io.EOF || len(res.errs) > 0 {
		t.Fatalf("final %v, errors %v", res.final, res.errs)
	}
	var b strings.Builder
	for _, rec := range res.records {
		b.WriteString(render(rec, true) + "\n")
	}
	path := filepath.Join("testdata", "generated_seed1_rdw.golden")
	if *rewrite {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("records differ from %s (go test -run TestGolden -rewrite to accept):\n%s", path, b.String())
	}
}

// TestFramingDoesNotChangeKeysOrDigests is the promise that ingesting the
// same messages under another framing posts nothing more.
func TestFramingDoesNotChangeKeysOrDigests(t *testing.T) {
	var want []string
	for _, kind := range Framings()[:4] {
		for _, given := range []string{kind, ""} {
			t.Run(kind+"/given="+given, func(t *testing.T) {
				data, _ := generated(t, kind, 42, 600)
				res := readAll(t, data, testOptions(given))
				if res.final != io.EOF || len(res.errs) > 0 {
					t.Fatalf("final %v, errors %v", res.final, res.errs)
				}
				var got []string
				for _, rec := range res.records {
					got = append(got, render(rec, false))
				}
				if want == nil {
					want = got
				}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("records differ from those read as %s", Framings()[0])
				}
			})
		}
	}
	one := write(t, FramingRaw, purchase().Message())
	for _, kind := range Framings() {
		t.Run("one message as "+kind, func(t *testing.T) {
			res := readAll(t, write(t, kind, purchase().Message()), testOptions(""))
			raw := readAll(t, one, testOptions(FramingRaw))
			if res.final != io.EOF || len(res.records) != 1 || render(res.records[0], false) != render(raw.records[0], false) {
				t.Fatalf("final %v, records %v", res.final, res.records)
			}
		})
	}
}

func TestDetection(t *testing.T) {
	for _, kind := range Framings()[:4] {
		t.Run(kind, func(t *testing.T) {
			data, sum := generated(t, kind, 9, 300)
			rd, err := NewReader(iotest.OneByteReader(bytes.NewReader(data)), testOptions(""))
			if err != nil {
				t.Fatal(err)
			}
			n := int64(0)
			for {
				_, err := rd.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				n++
			}
			if n != sum.Messages || rd.Framing() != kind {
				t.Errorf("%d records as %q, want %d as %s", n, rd.Framing(), sum.Messages, kind)
			}
		})
	}
}

func TestWrongSpecOrFramingIsRejected(t *testing.T) {
	ascii := writeSpec(t, FramingRDW, SpecName87ASCII, purchase().Message(), purchase().Message())
	std := write(t, FramingRDW, purchase().Message(), purchase().Message())
	tests := []struct {
		name    string
		data    []byte
		opts    Options
		final   error // nil: a ParseError at message 1, offset 0
		errWant string
	}{
		{"spec87ascii file read with spec87", ascii, testOptions(FramingRDW), nil, "does not decode with the spec"},
		{"spec87 file read with spec87ascii", std, Options{Framing: FramingRDW, Spec: SpecName87ASCII, Hasher: testHasher}, nil, "does not decode"},
		{"spec87ascii file detected with spec87", ascii, testOptions(""), ErrFramingUndetected, "no framing reads the whole file with spec spec87"},
		{"rdw file read as len2", std, testOptions(FramingLen2), nil, "len2: a zero-length message"},
		{"rdw file read as ascii4", std, testOptions(FramingASCII4), nil, "not 4 ASCII digits"},
		{"rdw file read as hex", std, testOptions(FramingHex), nil, "hex"},
		{"rdw file read as raw", std, testOptions(FramingRaw), nil, "MTI"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := readAll(t, tt.data, tt.opts)
			if len(res.records) > 0 && tt.final == nil {
				t.Errorf("%d records from a misread file", len(res.records))
			}
			var err error
			if tt.final != nil {
				err = res.final
				if !errors.Is(err, tt.final) {
					t.Fatalf("final %v, want %v", err, tt.final)
				}
			} else {
				if len(res.errs) == 0 {
					t.Fatalf("no error; final %v", res.final)
				}
				err = res.errs[0]
				var pe *formats.ParseError
				if errors.As(err, &pe); pe.Line != 1 || pe.Offset != 0 {
					t.Errorf("error at message %d offset %d", pe.Line, pe.Offset)
				}
			}
			if !strings.Contains(err.Error(), tt.errWant) {
				t.Errorf("error %q lacks %q", err, tt.errWant)
			}
		})
	}
}

// TestOnePassReportsEveryBadMessage: Next goes on past a bad message, so
// one pass names them all, each with its message index and offset.
func TestOnePassReportsEveryBadMessage(t *testing.T) {
	good := purchase().Message()
	badAmount := with(good, fieldAmount, "0000000001X0")
	data := write(t, FramingHex, good, badAmount, good, good, good)
	lines := bytes.SplitAfter(data, []byte("\n"))
	undecodable := []byte(strings.ToUpper(hex.EncodeToString([]byte("0200F000"))) + "\n")
	offset4 := int64(len(lines[0]) + len(lines[1]) + len(lines[2]))
	data = bytes.Join([][]byte{lines[0], lines[1], lines[2], undecodable, lines[4]}, nil)

	res := readAll(t, data, testOptions(FramingHex))
	if res.final != io.EOF || len(res.records) != 3 || len(res.errs) != 2 {
		t.Fatalf("final %v, %d records, errors %v", res.final, len(res.records), res.errs)
	}
	var first, second *formats.ParseError
	errors.As(res.errs[0], &first)
	errors.As(res.errs[1], &second)
	if first.Line != 2 || first.Field != "DE4" || !errors.Is(first, ErrInvalid) {
		t.Errorf("first error %v", first)
	}
	if second.Line != 4 || second.Offset != offset4 || !errors.Is(second, ErrDecode) {
		t.Errorf("second error %v, want message 4 at offset %d", second, offset4)
	}

	// Detected, the same file ends in ErrFramingUndetected, naming the
	// message that did not decode: no framing read the whole file. The file
	// is small enough for every framing to have failed before one was
	// settled on, so no record comes first.
	res = readAll(t, data, testOptions(""))
	if !errors.Is(res.final, ErrFramingUndetected) || len(res.records) != 0 ||
		!strings.Contains(res.final.Error(), fmt.Sprintf("hex fails at message 4, offset %d", offset4)) {
		t.Fatalf("detected: final %v, %d records", res.final, len(res.records))
	}
}

func TestFatalFramingErrorStops(t *testing.T) {
	data := write(t, FramingRDW, purchase().Message(), purchase().Message())
	data = append(data, 0, 0, 0, 200, '0', '2')
	res := readAll(t, data, testOptions(FramingRDW))
	if len(res.records) != 2 || len(res.errs) != 1 || res.final != io.EOF {
		t.Fatalf("truncated at the end: %d records, errors %v, final %v", len(res.records), res.errs, res.final)
	}
	data = append(data[:len(data)-6], 0xff, 0xff, 0xff, 0xff)
	data = append(data, write(t, FramingRDW, purchase().Message())...)
	res = readAll(t, data, testOptions(FramingRDW))
	if len(res.records) != 2 || len(res.errs) != 1 || !errors.Is(res.final, ErrStopped) {
		t.Fatalf("length out of range: %d records, errors %v, final %v", len(res.records), res.errs, res.final)
	}
	if !strings.Contains(res.final.Error(), "message 3") {
		t.Errorf("final error %q does not name the message", res.final)
	}
}

func TestLimits(t *testing.T) {
	data, _ := generated(t, FramingLen2, 5, 10)
	res := readAll(t, data, Options{Framing: FramingLen2, Hasher: testHasher, Limits: formats.Limits{MaxRecords: 4}})
	if len(res.records)+len(res.errs) != 4 || !errors.Is(res.final, formats.ErrTooLarge) {
		t.Fatalf("MaxRecords: %d records, final %v", len(res.records), res.final)
	}
	res = readAll(t, data, Options{Hasher: testHasher, Limits: formats.Limits{MaxLineBytes: 50}})
	if len(res.records) > 0 || !errors.Is(res.final, ErrFramingUndetected) {
		t.Fatalf("MaxLineBytes, detected: %d records, final %v", len(res.records), res.final)
	}
	res = readAll(t, data, Options{Framing: FramingLen2, Hasher: testHasher, Limits: formats.Limits{MaxLineBytes: 50}})
	if len(res.errs) != 1 || !errors.Is(res.errs[0], formats.ErrTooLarge) || !errors.Is(res.final, ErrStopped) {
		t.Fatalf("MaxLineBytes: errors %v, final %v", res.errs, res.final)
	}
}

func TestNewReaderOptions(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want error
	}{
		{"unknown framing", Options{Framing: "rdw4", Hasher: testHasher}, ErrOptions},
		{"zero hasher", Options{}, ErrOptions},
		{"unknown spec", Options{Spec: "spec93", Hasher: testHasher}, ErrSpec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewReader(bytes.NewReader(nil), tt.opts); !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestEmptyInput(t *testing.T) {
	res := readAll(t, nil, testOptions(""))
	if !errors.Is(res.final, ErrFramingUndetected) || !strings.Contains(res.final.Error(), "finds no message") {
		t.Errorf("detected: %v", res.final)
	}
	res = readAll(t, nil, testOptions(FramingRDW))
	if res.final != io.EOF || len(res.records)+len(res.errs) != 0 {
		t.Errorf("rdw: %v", res.final)
	}
}

// TestVerdict covers the outcomes of detection that real files rarely
// reach: two framings that both read the whole file, and a file that only
// another framing than the one records came from reads.
func TestVerdict(t *testing.T) {
	lanes := func(states ...string) *Reader {
		r := &Reader{detect: true, dec: &decoder{name: "spec87"}}
		for i, s := range states {
			l := &lane{fr: newFramer(Framings()[i], 10)}
			switch s {
			case "good":
				l.good = 1
			case "failed":
				l.good, l.failure = 1, &formats.ParseError{Line: 2, Offset: 9, Err: ErrDecode}
			}
			r.lanes = append(r.lanes, l)
		}
		r.prov = r.lanes[0]
		return r
	}
	tests := []struct {
		name   string
		states []string
		want   string
	}{
		{"one", []string{"good", "failed", "none"}, ""},
		{"two", []string{"good", "good", "failed"}, "reads consistently as each of rdw, len2"},
		{"another", []string{"failed", "good", "none"}, "only len2 reads the whole file, but reading began as rdw"},
		{"none", []string{"failed", "none"}, "rdw fails at message 2, offset 9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := lanes(tt.states...).verdict()
			if tt.want == "" {
				if err != io.EOF {
					t.Fatalf("verdict %v", err)
				}
				return
			}
			if !errors.Is(err, ErrFramingUndetected) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("verdict %v, want %q", err, tt.want)
			}
		})
	}
}

// TestMemoryIsFlat reads a generated file of about 20 MB from disk. The
// live heap while reading the last messages must be no larger than while
// reading the first.
func TestMemoryIsFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads 150,000 messages")
	}
	const messages = 150_000
	path := filepath.Join(t.TempDir(), "big.rdw")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(f, GenerateOptions{Seed: 8, Messages: messages, Framing: FramingRDW}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if f, err = os.Open(path); err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := NewReader(f, testOptions(""))
	if err != nil {
		t.Fatal(err)
	}
	live := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	var early, late uint64 // the largest live heap seen in each half
	n := 0
	for ; ; n++ {
		if n%15_000 == 10_000 {
			if n < messages/2 {
				early = max(early, live())
			} else {
				late = max(late, live())
			}
		}
		_, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	st, _ := f.Stat()
	if n != messages {
		t.Fatalf("%d records", n)
	}
	t.Logf("%d messages, %d MB; live heap at most %d KB in the first half, %d KB in the second", n, st.Size()>>20, early>>10, late>>10)
	if late > early+256<<10 {
		t.Errorf("the live heap grew from %d KB to %d KB", early>>10, late>>10)
	}
}

// TestDetectionThatFailsLate: in a file larger than one message limit, the
// framing is settled early and records flow; a message that later fails to
// decode is reported where it is, and the file still ends in
// ErrFramingUndetected, never io.EOF.
func TestDetectionThatFailsLate(t *testing.T) {
	data, _ := generated(t, FramingHex, 4, 1000)
	lines := bytes.SplitAfter(data, []byte("\n"))
	var offset int64
	for _, l := range lines[:799] {
		offset += int64(len(l))
	}
	lines[799] = []byte(strings.ToUpper(hex.EncodeToString([]byte("0200F000"))) + "\n")
	res := readAll(t, bytes.Join(lines, nil), testOptions(""))
	if len(res.records) != 999 || len(res.errs) != 1 || !errors.Is(res.final, ErrFramingUndetected) {
		t.Fatalf("%d records, errors %v, final %v", len(res.records), res.errs, res.final)
	}
	var pe *formats.ParseError
	if !errors.As(res.errs[0], &pe) || pe.Line != 800 || pe.Offset != offset || !errors.Is(pe, ErrDecode) {
		t.Errorf("error %v, want message 800 at offset %d", res.errs[0], offset)
	}
	if !strings.Contains(res.final.Error(), fmt.Sprintf("hex fails at message 800, offset %d", offset)) {
		t.Errorf("final %v", res.final)
	}
}
