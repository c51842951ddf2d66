package camt

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats"
)

func TestReaderRefusesTheZeroHasher(t *testing.T) {
	r := NewReader(strings.NewReader("<Document/>"), Options{})
	if _, err := r.Next(); !errors.Is(err, ErrNoHasher) {
		t.Fatalf("Next = %v, want ErrNoHasher", err)
	}
}

func TestReaderNotCamtIsNotThisFormat(t *testing.T) {
	for _, in := range []string{"", "01,SENDER,RECEIVER/", "<html><body/></html>", `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.002.001.03"/>`} {
		res := readAll(t, in, Options{})
		if !errors.Is(res.final, formats.ErrNotThisFormat) {
			t.Errorf("%q: final %v, want ErrNotThisFormat", in, res.final)
		}
	}
	// A camt namespace with an unknown version is camt, but refused.
	res := readAll(t, `<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.42"/>`, Options{})
	if errors.Is(res.final, formats.ErrNotThisFormat) || !errors.Is(res.final, ErrInvalidFile) || !errors.Is(res.errs[0], ErrNamespace) {
		t.Errorf("unknown version: final %v, errors %v", res.final, res.errs)
	}
}

func TestReaderBankTxCodeOverride(t *testing.T) {
	stmts := RandomStatements(RandomOptions{Seed: 1, Entries: 6})
	var b bytes.Buffer
	if err := Generate(&b, stmts, GenerateOptions{}); err != nil {
		t.Fatal(err)
	}
	res := readAll(t, b.String(), Options{BankTxCodes: map[string]formats.LineType{"PMNT/ICDT": formats.Fee}})
	if res.final != io.EOF {
		t.Fatal(res.final)
	}
	for _, r := range res.records {
		if (r.Direction == formats.Debit) != (r.LineType == formats.Fee) {
			t.Errorf("record %s: %s %s", r.Key, r.Direction, r.LineType)
		}
	}
}

func TestReaderLimits(t *testing.T) {
	stmts := RandomStatements(RandomOptions{Seed: 2, Entries: 10, BatchPercent: 100})
	var b bytes.Buffer
	if err := Generate(&b, stmts, GenerateOptions{}); err != nil {
		t.Fatal(err)
	}
	res := readAll(t, b.String(), Options{MaxDetails: 1})
	if res.final == io.EOF || !errors.Is(res.errs[0], formats.ErrTooLarge) {
		t.Errorf("MaxDetails: final %v, errors %v", res.final, res.errs)
	}
	res = readAll(t, b.String(), Options{Limits: formats.Limits{MaxRecords: 5}})
	if res.final == io.EOF || !errors.Is(res.errs[len(res.errs)-1], formats.ErrTooLarge) || len(res.records) > 5 {
		t.Errorf("MaxRecords: final %v, %d records", res.final, len(res.records))
	}
}

// TestReaderMemoryIsFlat reads a statement of 50,000 entries from a
// stream: the live heap afterwards must not have grown with it.
func TestReaderMemoryIsFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("large input")
	}
	pr, pw := io.Pipe()
	go func() {
		stmts := RandomStatements(RandomOptions{Seed: 9, Entries: 50_000, BatchPercent: 5})
		pw.CloseWithError(Generate(pw, stmts, GenerateOptions{}))
	}()
	r := NewReader(pr, Options{Hasher: testHasher})
	var before runtime.MemStats
	n := 0
	for {
		_, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 1000 {
			runtime.GC()
			runtime.ReadMemStats(&before)
		}
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	// The generator's own statement list is live in the other goroutine
	// until it returns, so only the reader's growth is bounded here.
	if grow := int64(after.HeapAlloc) - int64(before.HeapAlloc); grow > 8<<20 {
		t.Errorf("heap grew by %d bytes over %d lines", grow, n)
	}
}

func TestReaderCountsEntriesNotBooked(t *testing.T) {
	stmts := RandomStatements(RandomOptions{Seed: 4, Entries: 5})
	stmts[0].Entries[1].Status = "PDNG"
	stmts[0].Entries[3].Status = "INFO"
	var b bytes.Buffer
	if err := Generate(&b, stmts, GenerateOptions{Version: "001.10"}); err != nil {
		t.Fatal(err)
	}
	r := NewReader(&b, Options{Hasher: testHasher})
	n := 0
	for {
		_, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 3 || r.Skipped() != 2 || r.WarningCount() != 0 {
		t.Errorf("%d lines, %d skipped, %d warnings", n, r.Skipped(), r.WarningCount())
	}
}

// TestReaderReadsTheSTUZZANamespace reads a statement under the namespace
// Austrian banks write, "ISO:camt.053.001.02:APC:STUZZA:payments:003", as
// the camt.053.001.02 it is; a look-alike that is not STUZZA's is refused.
func TestReaderReadsTheSTUZZANamespace(t *testing.T) {
	doc := func(ns string) string {
		return `<Document xmlns="` + ns + `"><BkToCstmrStmt><Stmt><Id>S1</Id>` +
			`<Acct><Id><IBAN>AT021200000703447144</IBAN></Id></Acct>` +
			`<Bal><Tp><CdOrPrtry><Cd>PRCD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">150.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2019-02-28</Dt></Dt></Bal>` +
			`<Bal><Tp><CdOrPrtry><Cd>CLBD</Cd></CdOrPrtry></Tp><Amt Ccy="EUR">200.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Dt><Dt>2019-03-01</Dt></Dt></Bal>` +
			`<Ntry><Amt Ccy="EUR">50.00</Amt><CdtDbtInd>CRDT</CdtDbtInd><Sts>BOOK</Sts><ValDt><Dt>2019-03-01</Dt></ValDt>` +
			`<AcctSvcrRef>2013122710583450000</AcctSvcrRef></Ntry></Stmt></BkToCstmrStmt></Document>`
	}
	res := readAll(t, doc("ISO:camt.053.001.02:APC:STUZZA:payments:003"), Options{})
	if res.final != io.EOF || len(res.records) != 1 || res.records[0].Amount != 5000 {
		t.Fatalf("final %v, records %v, errors %v", res.final, res.records, res.errs)
	}
	for _, ns := range []string{"ISO:camt.053.001.02", "ISO:camt.053.001.02:APC:OTHER:payments:003", "ISO:camt.053.001.99:APC:STUZZA:payments:003"} {
		if res := readAll(t, doc(ns), Options{}); res.final == io.EOF {
			t.Errorf("namespace %q was read", ns)
		}
	}
}
