package ipm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/clearing-dev/clearing/formats"
)

// TestGenerateReadsBack reads generated files of every blocking, encoding
// and number of logical files, and finds what the generator says it wrote.
func TestGenerateReadsBack(t *testing.T) {
	for _, blocked := range []bool{true, false} {
		for _, enc := range Encodings() {
			for _, files := range []int{1, 3} {
				name := fmt.Sprintf("blocked=%v/%s/files=%d", blocked, enc, files)
				t.Run(name, func(t *testing.T) {
					data, sum := generate(t, GenerateOptions{Seed: 7, Presentments: 60, LogicalFiles: files,
						Blocked: blocked, Encoding: enc, Lifecycle: true})
					if blocked && len(data)%blockSize != 0 {
						t.Fatalf("a blocked file of %d bytes", len(data))
					}
					res := readAll(t, data, testOptions())
					if !res.ok() {
						t.Fatalf("errors %v, final %v", res.errs, res.final)
					}
					if res.rd.Blocked() != blocked {
						t.Errorf("read as blocked=%v", res.rd.Blocked())
					}
					n := countKinds(res.recs)
					if int64(len(res.recs)) != sum.Messages {
						t.Errorf("%d records, %d messages written", len(res.recs), sum.Messages)
					}
					if n[formats.Clearing] != sum.Presentments+sum.Fees || n[formats.Reversal] != sum.Reversals ||
						n[formats.Return] != sum.Chargebacks+sum.Second || n[formats.Skip] != sum.Controls {
						t.Errorf("kinds %v, summary %+v", n, sum)
					}
					seen := map[string]bool{}
					for _, r := range res.recs {
						if r.Kind == formats.Skip {
							continue
						}
						if seen[r.Key] {
							t.Errorf("key %s twice", r.Key)
						}
						seen[r.Key] = true
					}
				})
			}
		}
	}
}

// TestGenerateIsDeterministic guards the property make bench and the demo
// rely on.
func TestGenerateIsDeterministic(t *testing.T) {
	a, _ := generate(t, GenerateOptions{Seed: 3, Presentments: 20, Blocked: true, Lifecycle: true})
	b, _ := generate(t, GenerateOptions{Seed: 3, Presentments: 20, Blocked: true, Lifecycle: true})
	c, _ := generate(t, GenerateOptions{Seed: 4, Presentments: 20, Blocked: true, Lifecycle: true})
	if !bytes.Equal(a, b) || bytes.Equal(a, c) {
		t.Fatal("the seed does not decide the bytes")
	}
}

// TestKeysIgnoreBlockingAndEncoding guards DESIGN §4: the same messages,
// blocked or not, in EBCDIC or ASCII, with other file ids and DE71
// numbers, give the same keys and digests.
func TestKeysIgnoreBlockingAndEncoding(t *testing.T) {
	digests := func(data []byte) map[string][32]byte {
		res := readAll(t, data, testOptions())
		if !res.ok() {
			t.Fatalf("errors %v, final %v", res.errs, res.final)
		}
		out := map[string][32]byte{}
		for _, r := range res.recs {
			if r.Kind != formats.Skip {
				out[r.Key] = formats.Digest(&r)
			}
		}
		return out
	}
	base := GenerateOptions{Seed: 11, Presentments: 40, Lifecycle: true}
	want := digests(func() []byte { d, _ := generate(t, base); return d }())
	for _, v := range []GenerateOptions{
		{Seed: 11, Presentments: 40, Lifecycle: true, Blocked: true},
		{Seed: 11, Presentments: 40, Lifecycle: true, Encoding: EncodingLatin1},
		{Seed: 11, Presentments: 40, Lifecycle: true, Blocked: true, Encoding: EncodingCP037},
	} {
		got := digests(func() []byte { d, _ := generate(t, v); return d }())
		if len(got) != len(want) {
			t.Fatalf("%+v: %d keys, want %d", v, len(got), len(want))
		}
		for k, d := range want {
			if got[k] != d {
				t.Errorf("%+v: key %s has another digest or is missing", v, k)
			}
		}
	}
}

// ARNStart and FirstFile make the next file of a day, and Day a file of
// another day, share no key with the first: not an ARN, not a fee
// collection's control number.
func TestGenerateARNStartAndDay(t *testing.T) {
	keys := func(o GenerateOptions) map[string]bool {
		data, _ := generate(t, o)
		out := map[string]bool{}
		for _, r := range readAll(t, data, testOptions()).recs {
			if r.Kind != formats.Skip {
				out[r.Key] = true
			}
		}
		return out
	}
	first := keys(GenerateOptions{Seed: 1, Presentments: 50, Lifecycle: true})
	for name, o := range map[string]GenerateOptions{
		"arn start": {Seed: 1, Presentments: 50, Lifecycle: true, ARNStart: 51, FirstFile: 2},
		"day":       {Seed: 1, Presentments: 50, Lifecycle: true, Day: time.Date(2026, time.March, 2, 0, 0, 0, 0, time.UTC)},
	} {
		for k := range keys(o) {
			if first[k] {
				t.Fatalf("%s: key %s in both files", name, k)
			}
		}
	}
	for _, o := range []GenerateOptions{{ARNStart: -1}, {FirstFile: 99_999, LogicalFiles: 2}} {
		if _, err := Generate(io.Discard, o); !errors.Is(err, ErrOptions) {
			t.Errorf("%+v: %v", o, err)
		}
	}
}
