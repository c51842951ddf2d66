package main

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/clearing-dev/clearing/formats/ach"
	"github.com/clearing-dev/clearing/formats/bai2"
)

// generate writes a deterministic file into the scenario's directory with
// the generators the other tests use, and prints what it holds:
//
//	generate ach name=F seed=S count=N [first=I] [change=(I, ...)] [days=D] [created=4h] [modifier=B] [batch=N] [first-batch=N]
//	generate returns name=F seed=S count=N of=(I:CODE, ...) [company=ID]
//	generate bai2 name=F date=D account=A
//
// The indexes of ach and returns count the live entries of
// ach.GenerateEntries(seed, count): prenotes are left out, since they post
// nothing.
func (s *scenario) generate(t *testing.T, d *datadriven.TestData) string {
	var name string
	d.ScanArgs(t, "name", &name)
	if len(d.CmdArgs) == 0 {
		d.Fatalf(t, "generate: want ach, returns or bai2")
	}
	var b bytes.Buffer
	var out string
	switch kind := d.CmdArgs[0].Key; kind {
	case "ach":
		out = generateACH(t, d, &b)
	case "returns":
		out = generateReturns(t, d, &b)
	case "bai2":
		out = generateBAI2(t, d, &b)
	default:
		d.Fatalf(t, "generate %s: want ach, returns or bai2", kind)
	}
	s.c.file(name, b.Bytes())
	return out
}

// liveEntries are the live entries of ach.GenerateEntries for the
// directive's seed and count.
func liveEntries(t *testing.T, d *datadriven.TestData) []ach.Entry {
	var seed uint64
	var count int
	d.ScanArgs(t, "seed", &seed)
	d.ScanArgs(t, "count", &count)
	return liveOnly(entries(seed, count))
}

// generateACH writes the entries first to the last, one line each: change
// adds one cent to the entries at those indexes, days moves their
// effective date, created moves the header's creation time (2026-11-29
// 06:00 UTC), and modifier, batch and first-batch set the file ID
// modifier, batch size and first batch number, as a corrected re-upload
// changes them.
func generateACH(t *testing.T, d *datadriven.TestData, w *bytes.Buffer) string {
	es := liveEntries(t, d)
	first, days := 0, 0
	d.MaybeScanArgs(t, "first", &first)
	d.MaybeScanArgs(t, "days", &days)
	if first < 0 || first > len(es) {
		d.Fatalf(t, "first=%d: the sequence has %d live entries", first, len(es))
	}
	es = slices.Clone(es[first:])
	if arg, ok := d.Arg("change"); ok {
		for _, v := range arg.Vals {
			i, err := strconv.Atoi(v)
			if err != nil || i < first || i-first >= len(es) {
				d.Fatalf(t, "change=%s: not an index of the file's entries", v)
			}
			es[i-first].Amount++
		}
	}
	for i := range es {
		es[i].EffectiveDate = es[i].EffectiveDate.AddDate(0, 0, days)
	}
	h := ach.DefaultHeader(created)
	var shift string
	if d.MaybeScanArgs(t, "created", &shift) {
		dur, err := time.ParseDuration(shift)
		if err != nil {
			d.Fatalf(t, "created=%s: %v", shift, err)
		}
		h.Created = h.Created.Add(dur)
	}
	d.MaybeScanArgs(t, "modifier", &h.IDModifier)
	d.MaybeScanArgs(t, "batch", &h.BatchSize)
	d.MaybeScanArgs(t, "first-batch", &h.FirstBatch)
	if err := ach.WriteEntries(w, h, slices.Values(es)); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for i, e := range es {
		fmt.Fprintf(&out, "%d %s %s %s\n", first+i, e.Key(), side(e), cents(e.Amount))
	}
	return out.String()
}

// generateReturns writes returns of the entries at the indexes, with the
// return reason codes, one line each; company replaces the originals'
// company, which makes returns of entries the ledger never saw.
func generateReturns(t *testing.T, d *datadriven.TestData, w *bytes.Buffer) string {
	es := liveEntries(t, d)
	var rs []ach.Return
	arg, _ := d.Arg("of")
	for n, v := range arg.Vals {
		idx, code, ok := strings.Cut(v, ":")
		i, err := strconv.Atoi(idx)
		if !ok || err != nil || i < 0 || i >= len(es) {
			d.Fatalf(t, "of=%s: want INDEX:CODE", v)
		}
		e := es[i]
		d.MaybeScanArgs(t, "company", &e.CompanyID)
		rs = append(rs, ach.ReturnOf(e, code, n+1))
	}
	if err := ach.WriteReturns(w, ach.DefaultHeader(created.Add(48*time.Hour)), slices.Values(rs)); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&out, "%s of %s %s %s\n", r.Code, r.Original.Key(), side(r.Original), cents(r.Original.Amount))
	}
	return out.String()
}

// generateBAI2 writes a BAI2 statement of the directive's input with
// bai2.Generate, which adds the headers and computes every trailer's
// control total, and prints the file. Each input line,
//
//	TYPE-CODE AMOUNT-MINOR REFERENCE
//
// is one detail (16) of the account on the as-of date, in USD, with
// REFERENCE as both the bank's and the customer's reference.
func generateBAI2(t *testing.T, d *datadriven.TestData, w *bytes.Buffer) string {
	var date, account string
	d.ScanArgs(t, "date", &date)
	d.ScanArgs(t, "account", &account)
	day, err := time.Parse("2006-01-02", date)
	if err != nil {
		d.Fatalf(t, "date=%s: %v", date, err)
	}
	var lines []bai2.Line
	for _, text := range strings.Split(strings.TrimSpace(d.Input), "\n") {
		var l bai2.Line
		if n, err := fmt.Sscan(text, &l.TypeCode, &l.Amount, &l.BankReference); n != 3 || err != nil {
			d.Fatalf(t, "%q: want TYPE-CODE AMOUNT-MINOR REFERENCE", text)
		}
		l.Account, l.Currency, l.Date, l.CustomerReference = account, "USD", day, l.BankReference
		lines = append(lines, l)
	}
	opts := bai2.GenerateOptions{Sender: "121042882", Created: created}
	if err := bai2.Generate(w, slices.Values(lines), opts); err != nil {
		d.Fatalf(t, "generate bai2: %v", err)
	}
	return w.String()
}

// side is an entry's direction seen from the customer account: credit or
// debit.
func side(e ach.Entry) string {
	if signed(e) > 0 {
		return "credit"
	}
	return "debit"
}

func cents(minor int64) string { return fmt.Sprintf("%d.%02d", minor/100, minor%100) }
