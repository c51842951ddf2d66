package iso8583

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/moov-io/iso8583"

	"github.com/clearing-dev/clearing/formats"
)

func TestGenerateIsDeterministic(t *testing.T) {
	a, _ := generated(t, FramingASCII4, 11, 500)
	b, _ := generated(t, FramingASCII4, 11, 500)
	c, _ := generated(t, FramingASCII4, 12, 500)
	if !bytes.Equal(a, b) {
		t.Error("the same seed gave different files")
	}
	if bytes.Equal(a, c) {
		t.Error("different seeds gave the same file")
	}
	// A change to this digest changes every generated fixture and benchmark
	// file; make it on purpose.
	const want = "d1f79b863527f336c6a83531ba7636e7ec8fdd011be4a7e1eb02220a5acfcd0f"
	if got := fmt.Sprintf("%x", sha256.Sum256(a)); got != want {
		t.Errorf("seed 11 now generates %s", got)
	}
}

// ledgerModel plays the ledger's part on a file's records: postings keyed
// by Key, reversals resolved through their Link to exactly one clearing
// posting. It is small and kept in memory, for tests only.
type ledgerModel struct {
	postings   map[string][32]byte // posting key -> digest
	clearing   []formats.Record
	duplicates int64
	conflicts  int64
	orphans    int64
	ambiguous  int64
}

func (l *ledgerModel) apply(t *testing.T, rec formats.Record) {
	post := func(key string) {
		d := formats.Digest(&rec)
		if old, ok := l.postings[key]; ok {
			if old == d {
				l.duplicates++
			} else {
				l.conflicts++
			}
			return
		}
		l.postings[key] = d
	}
	switch rec.Kind {
	case formats.Clearing:
		if _, seen := l.postings[rec.Key]; !seen {
			l.clearing = append(l.clearing, rec)
		}
		post(rec.Key)
	case formats.Reversal:
		var found []formats.Record
		for _, c := range l.clearing {
			ref := c.Reference
			if rec.Link.ByAlt {
				ref = c.AltReference
			}
			if ref == rec.Link.Reference && strings.HasPrefix(c.Key, rec.Link.KeyPrefix) {
				found = append(found, c)
			}
		}
		switch len(found) {
		case 0:
			l.orphans++
		case 1:
			post(found[0].Key + rec.Link.Suffix)
		default:
			l.ambiguous++
		}
	}
}

// TestGeneratedFileHoldsWhatItSays checks the summary against the reader,
// and the keys and links against a model of the ledger: every reversal but
// the orphans finds exactly one original, repeats are duplicates with equal
// digests, and nothing conflicts.
func TestGeneratedFileHoldsWhatItSays(t *testing.T) {
	data, sum := generated(t, FramingLen2, 2026, 5000)
	res := readAll(t, data, testOptions(FramingLen2))
	if res.final != io.EOF || len(res.errs) > 0 {
		t.Fatalf("final %v, errors %v", res.final, res.errs)
	}
	got := map[formats.Kind]int64{}
	l := &ledgerModel{postings: map[string][32]byte{}}
	for _, rec := range res.records {
		got[rec.Kind]++
		l.apply(t, rec)
	}
	if got[formats.Clearing] != sum.Clearing || got[formats.Notice] != sum.Notices ||
		got[formats.Reversal] != sum.Reversals || got[formats.Skip] != sum.Skipped || sum.Messages != 5000 {
		t.Errorf("reader counts %v, summary %+v", got, sum)
	}
	if l.orphans != sum.Orphans || l.duplicates != sum.Repeats || l.conflicts != 0 || l.ambiguous != 0 {
		t.Errorf("ledger model: %d orphans, %d duplicates, %d conflicts, %d ambiguous; summary %+v",
			l.orphans, l.duplicates, l.conflicts, l.ambiguous, sum)
	}
	for name, n := range map[string]int64{"orphans": sum.Orphans, "repeats": sum.Repeats, "partial": sum.Partial, "by DE90": sum.ByAlt} {
		if n == 0 {
			t.Errorf("no %s in 5000 messages", name)
		}
	}
}

func TestGenerateOptions(t *testing.T) {
	tests := []struct {
		name string
		opts GenerateOptions
		want error
	}{
		{"negative", GenerateOptions{Messages: -1, Framing: FramingRDW}, ErrOptions},
		{"raw holds one", GenerateOptions{Messages: 2, Framing: FramingRaw}, ErrOptions},
		{"unknown framing", GenerateOptions{Messages: 2, Framing: "rdw2"}, ErrOptions},
		{"unknown spec", GenerateOptions{Messages: 2, Framing: FramingRDW, Spec: "spec2003"}, ErrSpec},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Generate(io.Discard, tt.opts); !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
	var buf bytes.Buffer
	if _, err := Generate(&buf, GenerateOptions{Messages: 1, Framing: FramingRaw, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	if res := readAll(t, buf.Bytes(), testOptions("")); res.final != io.EOF || len(res.records) != 1 {
		t.Errorf("raw: final %v, %d records", res.final, len(res.records))
	}
}

func TestGenerateWithSpec87ASCII(t *testing.T) {
	var buf bytes.Buffer
	sum, err := Generate(&buf, GenerateOptions{Seed: 5, Messages: 300, Framing: FramingHex, Spec: SpecName87ASCII})
	if err != nil {
		t.Fatal(err)
	}
	opts := testOptions("")
	opts.Spec = SpecName87ASCII
	res := readAll(t, buf.Bytes(), opts)
	if res.final != io.EOF || int64(len(res.records)) != sum.Messages {
		t.Fatalf("final %v, %d records", res.final, len(res.records))
	}
	if res := readAll(t, buf.Bytes(), testOptions("")); !errors.Is(res.final, ErrFramingUndetected) {
		t.Errorf("read with spec87: %v", res.final)
	}
}

func TestWriter(t *testing.T) {
	spec := mustSpec(t, "")
	var buf bytes.Buffer
	w, err := NewWriter(&buf, FramingRaw, spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(purchase().Message()); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(purchase().Message()); !errors.Is(err, ErrRawHoldsOne) {
		t.Errorf("second raw message: %v", err)
	}
	if _, err := NewWriter(&buf, FramingRDW, nil); !errors.Is(err, ErrOptions) {
		t.Errorf("no spec: %v", err)
	}
	w, _ = NewWriter(&buf, FramingASCII4, spec)
	if err := w.WritePacked(make([]byte, 10000)); err == nil {
		t.Error("a 10000-byte message fits 4 digits")
	}
	if err := w.Write(with(purchase().Message(), fieldAmount, "1")); err == nil {
		t.Error("a 1-digit DE4 packed into a fixed 12-digit field")
	}
}

// TestWriteMoov writes a message value built with moov's own API and spec.
func TestWriteMoov(t *testing.T) {
	spec := mustSpec(t, SpecName87)
	msg := iso8583.NewMessage(spec.MessageSpec())
	msg.MTI("0800")
	for id, v := range map[int]string{fieldTransmission: "1129101010", fieldSTAN: "000042", 70: "301"} {
		if err := msg.Field(id, v); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, FramingLen2, spec)
	if err := w.WriteMoov(msg); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	res := readAll(t, buf.Bytes(), testOptions(""))
	if res.final != io.EOF || len(res.records) != 1 || res.records[0].Detail != "0800 network management request" {
		t.Fatalf("final %v, records %+v", res.final, res.records)
	}
}

// RRNStart numbers the RRNs (and so the STANs) from it: the next file of a
// seed shares no key with the first, RRN-less reversals included.
func TestGenerateRRNStart(t *testing.T) {
	keys := func(o GenerateOptions) map[string]bool {
		var buf bytes.Buffer
		if _, err := Generate(&buf, o); err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, r := range readAll(t, buf.Bytes(), testOptions("")).records {
			if r.Key != "" {
				out[r.Key] = true
			}
		}
		return out
	}
	first := keys(GenerateOptions{Seed: 1, Messages: 300, Framing: FramingRDW})
	// Seed 1's RRNs are 100000001 to 100000300; the next file starts after.
	next := keys(GenerateOptions{Seed: 1, Messages: 300, Framing: FramingRDW, RRNStart: 100_000_301})
	if len(first) == 0 || len(next) == 0 {
		t.Fatal("no keys")
	}
	for k := range next {
		if first[k] {
			t.Fatalf("key %s in both files", k)
		}
	}
	if _, err := Generate(io.Discard, GenerateOptions{Messages: 2, Framing: FramingRDW, RRNStart: 999_999_999_999}); !errors.Is(err, ErrOptions) {
		t.Errorf("RRNs past 12 digits: %v", err)
	}
}
