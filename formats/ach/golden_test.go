package ach

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clearing-dev/clearing/formats"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenFiles are the generated files whose records testdata/records.golden
// holds: one of each kind the generator writes.
func goldenFiles(t *testing.T) []struct {
	name string
	data []byte
} {
	entries := testEntries()
	h := DefaultHeader(testCreated)
	ret := ReturnOf(entries[0], "R01", 1)
	dis := DishonorOf(ret, "R68", 1)
	dated := ReturnOf(entries[1], "R10", 2)
	dated.EffectiveDate = time.Date(2026, time.March, 5, 0, 0, 0, 0, time.UTC)
	return []struct {
		name string
		data []byte
	}{
		{"entries", testFile(t, entries)},
		{"returns", write(t, func(w io.Writer) error {
			return WriteReturns(w, h, slices.Values([]Return{ret, dated, ReturnOf(entries[3], "R03", 3), dis, ContestOf(dis, "R73", 9)}))
		})},
		{"notices", write(t, func(w io.Writer) error {
			return WriteNotices(w, h, slices.Values([]Notice{NoticeOf(entries[2], "C03", "091000019 1122334455", 4)}))
		})},
		{"iat", write(t, func(w io.Writer) error { return WriteIAT(w, h, slices.Values(entries[:2])) })},
		{"adv", write(t, func(w io.Writer) error {
			return WriteAdvices(w, h, slices.Values([]Advice{{CompanyID: "1234567890", CompanyName: "ACME",
				EffectiveDate: entries[0].EffectiveDate, ODFI: "12104288", TransactionCode: 86, Amount: 4200,
				RDFI: "231380104", Account: "12345678", Operator: "01100001", JulianDay: 61, Sequence: 7}}))
		})},
	}
}

// renderRecord writes every field of a record on one line.
func renderRecord(r formats.Record) string {
	link := "-"
	if r.Link != nil {
		link = fmt.Sprintf("%s|%s|%s", r.Link.KeyPrefix, r.Link.Reference, r.Link.Suffix)
	}
	return fmt.Sprintf("%d:%d %s %s %q ref=%s %d %s %s %s/%s %s link=%s",
		r.Line, r.Offset, r.Key, r.Kind, r.Detail, r.Reference, r.Amount, r.Currency, r.Direction,
		r.Account.ID, r.Account.Last4, r.ValueDate.Format(time.DateOnly), link)
}

// TestGoldenRecords compares the records of one generated file of each kind
// with testdata/records.golden. Run with -update to rewrite it after a
// deliberate change to the mapping.
func TestGoldenRecords(t *testing.T) {
	var b strings.Builder
	for _, f := range goldenFiles(t) {
		fmt.Fprintf(&b, "# %s\n", f.name)
		for _, rec := range mustRead(t, f.data) {
			b.WriteString(renderRecord(rec) + "\n")
		}
	}
	path := filepath.Join("testdata", "records.golden")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got := b.String(); got != string(want) {
		t.Fatalf("records differ from %s (run with -update after a deliberate change):\n%s", path, got)
	}
}
