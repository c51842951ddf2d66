package iso8583

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats"
)

// fuzzModes is how many ways the fuzz target reads its input: each framing
// and detection, under each built-in spec.
const fuzzModes = 12

func fuzzOptions(mode byte) Options {
	opts := testOptions("")
	if m := int(mode) % 6; m < 5 {
		opts.Framing = Framings()[m]
	}
	if int(mode)/6%2 == 1 {
		opts.Spec = SpecName87ASCII
	}
	opts.Limits = formats.Limits{MaxLineBytes: 8 << 10, MaxRecords: 2000}
	return opts
}

// FuzzReader reads arbitrary bytes under every framing and spec. It must
// never panic or loop, every error must name a message and offset (or be a
// final error that says where reading stopped), no error may quote a long
// run of digits, and every record must keep the Record contract.
func FuzzReader(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		for mode := byte(0); mode < fuzzModes; mode++ {
			f.Add(seed, mode)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, mode byte) {
		rd, err := NewReader(bytes.NewReader(data), fuzzOptions(mode))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; ; i++ {
			if i > len(data)+10 {
				t.Fatalf("%d results from %d bytes", i, len(data))
			}
			rec, err := rd.Next()
			if err == nil {
				checkContract(t, rec)
				continue
			}
			checkErrorText(t, err)
			var pe *formats.ParseError
			if errors.As(err, &pe) {
				if pe.Line < 1 || pe.Offset < 0 || pe.Offset > int64(len(data)) {
					t.Fatalf("error at message %d, offset %d of %d bytes: %v", pe.Line, pe.Offset, len(data), err)
				}
				continue
			}
			switch {
			case err == io.EOF:
			case errors.Is(err, ErrFramingUndetected), errors.Is(err, ErrStopped):
				if !strings.Contains(err.Error(), "offset") && !strings.Contains(err.Error(), "finds no message") &&
					!strings.Contains(err.Error(), "reads") {
					t.Fatalf("final error names no place: %v", err)
				}
			case errors.Is(err, formats.ErrTooLarge):
			default:
				t.Fatalf("unexpected final error %v", err)
			}
			if _, again := rd.Next(); again != err {
				t.Fatalf("the final error changed from %v to %v", err, again)
			}
			return
		}
	})
}

// checkErrorText fails on an error that quotes eleven or more digits in a
// row: the reader's own numbers never run that long, so such a run came
// from the input and might be a PAN.
func checkErrorText(t *testing.T, err error) {
	run := 0
	for _, c := range err.Error() {
		if c >= '0' && c <= '9' {
			if run++; run >= 11 {
				t.Fatalf("error quotes a long run of digits: %v", err)
			}
			continue
		}
		run = 0
	}
}

// checkContract asserts what ingest relies on for every record.
func checkContract(t *testing.T, r formats.Record) {
	t.Helper()
	if r.Line < 1 || r.Offset < 0 {
		t.Fatalf("record at message %d, offset %d", r.Line, r.Offset)
	}
	if r.Kind == formats.Skip {
		return
	}
	ok := strings.HasPrefix(r.Key, keyPrefix) && r.Amount >= 0 && len(r.Currency) == 3 &&
		(r.Direction == formats.Credit || r.Direction == formats.Debit) && !r.ValueDate.IsZero() &&
		r.ValueDate.Equal(r.ValueDate.Truncate(24*60*60*1e9))
	switch r.Kind {
	case formats.Clearing:
		ok = ok && r.Amount > 0 && r.Account.ID != "" && r.Link == nil && r.Reference != ""
	case formats.Reversal:
		ok = ok && r.Amount > 0 && r.Link != nil && r.Link.Reference != "" && r.Link.Suffix == reversalSuffix &&
			strings.HasPrefix(r.Link.KeyPrefix, keyPrefix)
	case formats.Notice:
		ok = ok && r.Link == nil
	default:
		ok = false
	}
	if !ok {
		t.Fatalf("record breaks the contract: %+v", r)
	}
}

// fuzzSeeds are generated files in every framing, damaged copies of them,
// and, when CLEARING_CORPUS is set, the corpus's messages and moov's own
// fuzz seeds. Without the corpus the generated seeds alone are used.
func fuzzSeeds(f *testing.F) [][]byte {
	var seeds [][]byte
	for i, kind := range Framings() {
		n := 6
		if kind == FramingRaw {
			n = 1
		}
		var buf bytes.Buffer
		if _, err := Generate(&buf, GenerateOptions{Seed: uint64(i), Messages: n, Framing: kind}); err != nil {
			f.Fatal(err)
		}
		b := buf.Bytes()
		seeds = append(seeds, b, b[:len(b)/2], append(append([]byte(nil), b...), b[:7]...))
	}
	seeds = append(seeds, write(f, FramingRaw, purchase().Message()),
		write(f, FramingHex, reversalOf(purchase(), "0420", false, true).Message()))
	root := os.Getenv("CLEARING_CORPUS")
	if root == "" {
		return seeds
	}
	for _, dir := range []string{"moov-testdata", "inline-vectors", "fuzz"} {
		paths, err := filepath.Glob(filepath.Join(root, "iso8583", dir, "*"))
		if err != nil || len(paths) == 0 {
			f.Fatalf("CLEARING_CORPUS is set, but %s has no iso8583/%s: %v", root, dir, err)
		}
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			if dir == "fuzz" {
				b = fuzzFileBytes(f, b)
			}
			seeds = append(seeds, b)
		}
	}
	return seeds
}

// fuzzFileBytes returns the first []byte value of a "go test fuzz v1"
// corpus file.
func fuzzFileBytes(f *testing.F, b []byte) []byte {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "[]byte("); ok {
			s, err := strconv.Unquote(strings.TrimSuffix(v, ")"))
			if err != nil {
				f.Fatalf("fuzz seed %q: %v", line, err)
			}
			return []byte(s)
		}
	}
	return nil
}
