package ach

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	moov "github.com/moov-io/ach"

	"github.com/clearing-dev/clearing/formats"
)

// checkWithMoov reads data with moov-io/ach's own Reader and validates the
// File it builds, so that generated files are valid by a second opinion.
func checkWithMoov(t *testing.T, data []byte) {
	t.Helper()
	f, err := moov.NewReader(bytes.NewReader(data)).Read()
	if err != nil {
		t.Fatalf("moov-io/ach cannot read the generated file: %v", err)
	}
	if err := f.Validate(); err != nil {
		t.Fatalf("moov-io/ach rejects the generated file: %v", err)
	}
}

// forward is what the Reader must make of a generated forward entry.
func forward(e Entry) formats.Record {
	tx, _ := lookupTx(e.TransactionCode)
	rec := formats.Record{Key: e.Key(), Kind: formats.Clearing, Reference: e.Trace, Amount: e.Amount,
		Currency: "USD", Direction: tx.dir, Account: testHasher.Account(e.RDFI, e.Account), ValueDate: e.EffectiveDate}
	if tx.class == txPrenote {
		rec.Kind = formats.Notice
	}
	return rec
}

// sameRecord compares the fields a test sets, ignoring Detail, Line and
// Offset.
func sameRecord(t *testing.T, got, want formats.Record) {
	t.Helper()
	g, w := got, want
	g.Detail, g.Line, g.Offset = "", 0, 0
	w.Detail, w.Line, w.Offset = "", 0, 0
	if (g.Link == nil) != (w.Link == nil) || (g.Link != nil && *g.Link != *w.Link) {
		t.Fatalf("link %+v, want %+v", g.Link, w.Link)
	}
	g.Link, w.Link = nil, nil
	if g != w {
		t.Fatalf("record\n got %+v\nwant %+v", g, w)
	}
}

func TestGeneratedEntriesReadBack(t *testing.T) {
	entries := slices.Collect(GenerateEntries(7, 2500))
	h := DefaultHeader(testCreated)
	h.BatchSize = 100
	data := write(t, func(w io.Writer) error { return WriteEntries(w, h, slices.Values(entries)) })
	checkWithMoov(t, data)
	recs := mustRead(t, data)
	if len(recs) != len(entries) {
		t.Fatalf("%d records, want %d", len(recs), len(entries))
	}
	prenotes, debits := 0, 0
	for i, e := range entries {
		sameRecord(t, recs[i], forward(e))
		if recs[i].Kind == formats.Notice {
			prenotes++
		}
		if recs[i].Direction == formats.Debit {
			debits++
		}
	}
	if prenotes == 0 || debits == 0 || debits == len(entries) {
		t.Fatalf("%d prenotes and %d debits in %d entries: the mix is missing", prenotes, debits, len(entries))
	}
	if batches := strings.Count(string(data), "\n5"); batches != 25 {
		t.Fatalf("%d batches, want 25 of 100 entries", batches)
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	h := DefaultHeader(testCreated)
	a := write(t, func(w io.Writer) error { return WriteEntries(w, h, GenerateEntries(1, 300)) })
	b := write(t, func(w io.Writer) error { return WriteEntries(w, h, GenerateEntries(1, 300)) })
	c := write(t, func(w io.Writer) error { return WriteEntries(w, h, GenerateEntries(2, 300)) })
	if !bytes.Equal(a, b) {
		t.Fatal("the same seed wrote different files")
	}
	if bytes.Equal(a, c) {
		t.Fatal("different seeds wrote the same file")
	}
}

// TestCorrectedReupload checks that entries re-sent in a file with another
// header, creation time and batch numbers keep their keys and digests.
func TestCorrectedReupload(t *testing.T) {
	entries := slices.Collect(GenerateEntries(3, 40))
	first := mustRead(t, write(t, func(w io.Writer) error {
		return WriteEntries(w, DefaultHeader(testCreated), slices.Values(entries[:20]))
	}))
	h := DefaultHeader(testCreated.Add(26 * time.Hour))
	h.IDModifier, h.FirstBatch, h.BatchSize = "B", 40, 7
	again := mustRead(t, write(t, func(w io.Writer) error {
		return WriteEntries(w, h, slices.Values(entries[10:40]))
	}))
	for i := range 10 {
		o, r := first[10+i], again[i]
		if o.Key != r.Key || formats.Digest(&o) != formats.Digest(&r) {
			t.Fatalf("re-sent entry %d: key %s digest changed", i, r.Key)
		}
	}
	if len(again) != 30 {
		t.Fatalf("%d records in the re-upload, want 30", len(again))
	}
}

// TestChangedAmount checks that an entry re-sent with another amount keeps
// its key and changes its digest.
func TestChangedAmount(t *testing.T) {
	entries := testEntries()
	changed := slices.Clone(entries)
	changed[1].Amount++
	a, b := mustRead(t, testFile(t, entries)), mustRead(t, testFile(t, changed))
	if a[1].Key != b[1].Key || formats.Digest(&a[1]) == formats.Digest(&b[1]) {
		t.Fatalf("changed amount: keys %s %s, digests equal %v", a[1].Key, b[1].Key, formats.Digest(&a[1]) == formats.Digest(&b[1]))
	}
}

// TestDuplicateKeyInFile checks that two entries sharing company, date and
// trace number are both read with the same key: the ledger, not the reader,
// decides which posts.
func TestDuplicateKeyInFile(t *testing.T) {
	entries := testEntries()
	dup := entries[0]
	dup.Amount = 7
	data := testFile(t, append(slices.Clone(entries[:2]), dup))
	checkWithMoov(t, data)
	recs := mustRead(t, data)
	if len(recs) != 3 || recs[0].Key != recs[2].Key || recs[0].Amount == recs[2].Amount {
		t.Fatalf("records %+v", recs)
	}
}

func TestGeneratedReturnsReadBack(t *testing.T) {
	entries := testEntries()
	originals := mustRead(t, testFile(t, entries))
	ret := ReturnOf(entries[0], "R01", 1)
	dated := ReturnOf(entries[1], "R03", 2)
	dated.EffectiveDate = time.Date(2026, time.March, 4, 0, 0, 0, 0, time.UTC)
	prenote := ReturnOf(entries[3], "R02", 3)
	dis := DishonorOf(ret, "R68", 1)
	con := ContestOf(dis, "R71", 4)
	returns := []Return{ret, dated, prenote, dis, con}
	cases := []struct {
		ret    Return
		orig   formats.Record
		kind   formats.Kind
		suffix string
		detail string
	}{
		{ret, originals[0], formats.Return, ":return", "return R01"},
		{dated, originals[1], formats.Return, ":return", "return R03"},
		{prenote, originals[3], formats.Notice, ":return", "return R02 (zero amount)"},
		{dis, originals[0], formats.Return, ":return:dishonored", "dishonored return R68"},
		{con, originals[0], formats.Return, ":return:dishonored:contested", "contested dishonored return R71"},
	}
	for _, tc := range cases {
		t.Run(tc.detail, func(t *testing.T) {
			data := write(t, func(w io.Writer) error { return WriteReturns(w, DefaultHeader(testCreated), slices.Values(returns)) })
			checkWithMoov(t, data)
			var got formats.Record
			for _, rec := range mustRead(t, data) {
				if rec.Key == tc.ret.Key() {
					got = rec
				}
			}
			date := testCreated.Truncate(24 * time.Hour)
			if !tc.ret.EffectiveDate.IsZero() {
				date = tc.ret.EffectiveDate
			}
			// A return carries the original's account and side: the ledger
			// reverses the original's legs.
			want := formats.Record{Key: tc.ret.Key(), Kind: tc.kind, Reference: tc.ret.Trace,
				Amount: tc.orig.Amount, Currency: "USD", Direction: tc.orig.Direction, Account: tc.orig.Account,
				ValueDate: date, Link: &formats.Link{Reference: tc.orig.Reference, KeyPrefix: "ach:1234567890:", Suffix: tc.suffix}}
			sameRecord(t, got, want)
			if got.Detail != tc.detail {
				t.Fatalf("detail %q, want %q", got.Detail, tc.detail)
			}
		})
	}
}

func TestGeneratedNoticesReadBack(t *testing.T) {
	entries := testEntries()
	originals := mustRead(t, testFile(t, entries))
	n := NoticeOf(entries[1], "C01", "99887766554433", 5)
	data := write(t, func(w io.Writer) error {
		return WriteNotices(w, DefaultHeader(testCreated), slices.Values([]Notice{n}))
	})
	checkWithMoov(t, data)
	recs := mustRead(t, data)
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1", len(recs))
	}
	want := formats.Record{Key: n.Key(), Kind: formats.Notice, Reference: entries[1].Trace, Currency: "USD",
		Direction: formats.Debit, Account: originals[1].Account, ValueDate: testCreated.Truncate(24 * time.Hour),
		Link: &formats.Link{Reference: entries[1].Trace, KeyPrefix: "ach:1234567890:", Suffix: ":noc"}}
	sameRecord(t, recs[0], want)
	if recs[0].Detail != "NOC C01" || strings.Contains(recs[0].Detail, "9988") {
		t.Fatalf("detail %q", recs[0].Detail)
	}
}

func TestGeneratedIATReadBack(t *testing.T) {
	entries := slices.Collect(GenerateEntries(11, 30))
	data := write(t, func(w io.Writer) error { return WriteIAT(w, DefaultHeader(testCreated), slices.Values(entries)) })
	checkWithMoov(t, data)
	recs := mustRead(t, data)
	if len(recs) != len(entries) {
		t.Fatalf("%d records, want %d", len(recs), len(entries))
	}
	for i, e := range entries {
		sameRecord(t, recs[i], forward(e))
		if !strings.HasPrefix(recs[i].Detail, "IAT ") {
			t.Fatalf("detail %q", recs[i].Detail)
		}
	}
}

func TestGeneratedAdvicesReadBack(t *testing.T) {
	var advices []Advice
	for code := 81; code <= 88; code++ {
		advices = append(advices, Advice{CompanyID: "1234567890", CompanyName: "ACME", EffectiveDate: testEntries()[0].EffectiveDate,
			ODFI: "12104288", TransactionCode: code, Amount: int64(code) * 100, RDFI: "231380104", Account: "12345678",
			Operator: "01100001", JulianDay: 61, Sequence: code})
	}
	data := write(t, func(w io.Writer) error { return WriteAdvices(w, DefaultHeader(testCreated), slices.Values(advices)) })
	checkWithMoov(t, data)
	recs := mustRead(t, data)
	for i, a := range advices {
		dir := formats.Debit
		if a.TransactionCode%2 == 1 {
			dir = formats.Credit
		}
		want := formats.Record{Key: a.Key(), Kind: formats.Clearing, Reference: a.ID(), Amount: a.Amount, Currency: "USD",
			Direction: dir, Account: testHasher.Account(a.RDFI, a.Account), ValueDate: a.EffectiveDate}
		sameRecord(t, recs[i], want)
	}
	if recs[0].Key != "ach:1234567890:2026-03-02:011000010610081" {
		t.Fatalf("ADV key %s", recs[0].Key)
	}
}

// TestGenerateRejectsBadInput checks that the writers report what they
// cannot write instead of writing a broken file.
func TestGenerateRejectsBadInput(t *testing.T) {
	bad := testEntries()[:1]
	bad[0].Trace = "123"
	cases := []struct {
		name  string
		write func(io.Writer) error
	}{
		{"short trace", func(w io.Writer) error { return WriteEntries(w, DefaultHeader(testCreated), slices.Values(bad)) }},
		{"no entries", func(w io.Writer) error {
			return WriteEntries(w, DefaultHeader(testCreated), slices.Values([]Entry(nil)))
		}},
		{"bad transaction code", func(w io.Writer) error { return writeChanged(w, func(e *Entry) { e.TransactionCode = 99 }) }},
		{"SEC code not written", func(w io.Writer) error { return writeChanged(w, func(e *Entry) { e.SEC = "TEL" }) }},
		{"prenote with an amount", func(w io.Writer) error { return writeChanged(w, func(e *Entry) { e.TransactionCode = 23 }) }},
		{"trace not of the ODFI", func(w io.Writer) error { return writeChanged(w, func(e *Entry) { e.ODFI = "09100001" }) }},
		{"RDFI check digit", func(w io.Writer) error { return writeChanged(w, func(e *Entry) { e.RDFI = "231380105" }) }},
		{"ADV code", func(w io.Writer) error {
			return WriteAdvices(w, DefaultHeader(testCreated), slices.Values([]Advice{{CompanyID: "1", ODFI: "12104288",
				TransactionCode: 22, Amount: 1, RDFI: "231380104", Account: "1", Operator: "01100001", JulianDay: 1, Sequence: 1}}))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.write(io.Discard); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

// writeChanged writes the first test entry after change.
func writeChanged(w io.Writer, change func(*Entry)) error {
	e := testEntries()[:1]
	change(&e[0])
	return WriteEntries(w, DefaultHeader(testCreated), slices.Values(e))
}

// Past the last sequence number a trace holds (9,999,999: a file of ten
// million entries reaches it), sequences start again at 1 a week later:
// every trace stays 15 digits and every key unique, and the file reads.
func TestGenerateWrapsTheTraceSequence(t *testing.T) {
	es := slices.Collect(GenerateOptions{Seed: 1, Entries: 4, TraceStart: maxTraceSequence - 1}.Generate())
	want := []string{"9999998", "9999999", "0000001", "0000002"}
	keys := map[string]bool{}
	for i, e := range es {
		if len(e.Trace) != 15 || e.Trace[8:] != want[i] {
			t.Errorf("entry %d: trace %s, want the sequence %s", i, e.Trace, want[i])
		}
		if keys[e.Key()] {
			t.Errorf("entry %d: key %s repeats", i, e.Key())
		}
		keys[e.Key()] = true
	}
	if got := es[2].EffectiveDate.Sub(es[1].EffectiveDate); got != 7*24*time.Hour {
		t.Errorf("the wrapped sequence is %v after the last, want a week", got)
	}
	data := write(t, func(w io.Writer) error { return WriteEntries(w, DefaultHeader(testCreated), slices.Values(es)) })
	checkWithMoov(t, data)
	if recs := mustRead(t, data); len(recs) != len(es) {
		t.Fatalf("read %d records, want %d", len(recs), len(es))
	}
}

// A file whose control totals would not fit their twelve digits is
// refused, not written with its totals cut to their last digits (which
// moov-io/ach would do, and which the Reader then rejects).
func TestWriteRefusesTotalsBeyondTheControlRecord(t *testing.T) {
	var es []Entry
	for e := range GenerateEntries(1, 10_500) {
		if e.Amount > 0 {
			e.TransactionCode, e.Amount = 22, 99_999_999 // the largest credit an entry holds
			es = append(es, e)
		}
	}
	if int64(len(es))*99_999_999 <= maxControlAmount {
		t.Fatalf("%d entries do not pass the limit", len(es))
	}
	err := WriteEntries(io.Discard, DefaultHeader(testCreated), slices.Values(es))
	if err == nil || !strings.Contains(err.Error(), "twelve digits") {
		t.Fatalf("WriteEntries: %v, want the file's credits refused", err)
	}
	for _, tc := range []struct {
		t     totals
		limit int64
		ok    bool
	}{
		{totals{count: 10, debit: maxControlAmount, credit: maxControlAmount}, maxFileEntries, true},
		{totals{count: 10, credit: maxControlAmount + 1}, maxFileEntries, false},
		{totals{count: 10, debit: maxControlAmount + 1}, maxFileEntries, false},
		{totals{count: maxBatchEntries + 1}, maxBatchEntries, false},
	} {
		if err := checkControl("the file", tc.t, tc.limit); (err == nil) != tc.ok {
			t.Errorf("checkControl(%+v, %d): %v", tc.t, tc.limit, err)
		}
	}
}

// Files generated with another date, company or trace start share no key
// with the default file, and the default options are GenerateEntries.
func TestGenerateOptionsSeparateTheKeys(t *testing.T) {
	const n = 1200 // two runs, so that two originators take part
	base := slices.Collect(GenerateEntries(1, n))
	if same := slices.Collect(GenerateOptions{Seed: 1, Entries: n}.Generate()); !slices.Equal(same, base) {
		t.Fatal("the zero options are not GenerateEntries")
	}
	keys := map[string]string{}
	for _, e := range base {
		keys[e.Key()] = "default"
	}
	day := time.Date(2026, time.March, 9, 0, 0, 0, 0, time.UTC)
	for name, o := range map[string]GenerateOptions{
		"date":        {Seed: 1, Entries: n, Date: day},
		"company":     {Seed: 1, Entries: n, Company: "A1B2C3D4E5"},
		"trace start": {Seed: 1, Entries: n, TraceStart: n + 1},
	} {
		es := slices.Collect(o.Generate())
		if len(es) != n {
			t.Fatalf("%s: %d entries, want %d", name, len(es), n)
		}
		for i, e := range es {
			if prev, ok := keys[e.Key()]; ok {
				t.Fatalf("%s: entry %d has the key %s of the %s file", name, i, e.Key(), prev)
			}
			keys[e.Key()] = name
		}
		data := write(t, func(w io.Writer) error { return WriteEntries(w, DefaultHeader(testCreated), slices.Values(es)) })
		checkWithMoov(t, data)
		for i, rec := range mustRead(t, data) {
			sameRecord(t, rec, forward(es[i]))
		}
		switch name {
		case "date":
			if !es[0].EffectiveDate.Equal(day) {
				t.Errorf("date: first effective date %v", es[0].EffectiveDate)
			}
		case "company":
			for _, e := range es {
				if e.CompanyID != "A1B2C3D4E5" || e.SEC != moov.PPD {
					t.Fatalf("company: entry of %s %s", e.CompanyID, e.SEC)
				}
			}
		case "trace start":
			if got := es[0].Trace[8:]; got != fmt.Sprintf("%07d", n+1) {
				t.Errorf("trace start: first sequence %s", got)
			}
		}
	}
	for _, o := range []GenerateOptions{{Entries: -1}, {Company: "ACME"}, {Company: "acme000000"}, {TraceStart: 10_000_000}, {TraceStart: -1}, {Entries: MaxEntries + 1}} {
		if o.Check() == nil {
			t.Errorf("%+v: Check accepts it", o)
		}
	}
}
