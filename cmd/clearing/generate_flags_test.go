package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Every generator's defaults describe the same business day: what each
// writes posts, or is imported, dated --date's default, so that a set of
// files generated with the defaults reconciles over one day.
func TestGenerateDefaultsDescribeOneDay(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	day := defaultGenerateDate.Format(time.DateOnly)
	c.ingest(0, c.generated("day.ach", "ach"))
	c.ingest(-1, "--format", "iso8583", c.generated("day.rdw", "iso8583"))
	c.ingest(0, c.generated("day.ipm", "ipm", "--lifecycle"))
	c.ingest(0, "--format", "csv", "--map", "preset:signed-amount", c.generated("day.csv", "csv"))
	for _, kind := range []string{"bai2", "camt", "mt940"} {
		c.must(0, "statement", "import", "--source", kind, c.generated("statement."+kind, kind))
	}
	if sources := c.column(`SELECT DISTINCT source FROM postings WHERE tenant_id = $1`, c.tenant); len(sources) != 4 {
		t.Fatalf("posting sources %v, want four", sources)
	}
	if got := c.column(`SELECT DISTINCT value_date::text FROM postings WHERE tenant_id = $1`, c.tenant); len(got) != 1 || got[0] != day {
		t.Errorf("postings dated %v, want only %s", got, day)
	}
	// BAI2 lines with a value date (funds type V) are value-dated the day
	// before their as-of date, which is the day.
	if got := c.column(`SELECT DISTINCT CASE WHEN source = 'bai2' AND value_date = $2::date - 1 THEN $2::text ELSE value_date::text END
	                      FROM statement_lines WHERE tenant_id = $1`, c.tenant, day); len(got) != 1 || got[0] != day {
		t.Errorf("statement lines dated %v, want only %s", got, day)
	}
	if n := c.count(`SELECT count(DISTINCT source) FROM statement_lines WHERE tenant_id = $1`, c.tenant); n != 3 {
		t.Fatalf("%d statement sources, want 3", n)
	}
}

// Two files of one generator collided: every generated ACH file had the
// same originators, dates and traces, so a second file of another seed
// conflicted with the first on every key. With another --date, --company
// or --trace-start (the RRNs, ARNs and ids of the other formats alike) the
// files post side by side: nothing duplicate, nothing in conflict.
func TestGeneratedFilesWithTheirOwnDatesAndIDsPostSideBySide(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	const entries = 300
	first := c.generated("first.ach", "ach", "--entries", "300")
	// The collision the flags remove: the same keys, other amounts.
	clash := c.generated("clash.ach", "ach", "--entries", "300", "--seed", "2")
	files := []string{first,
		c.generated("next-day.ach", "ach", "--entries", "300", "--seed", "2", "--date", "2026-03-03"),
		c.generated("company.ach", "ach", "--entries", "300", "--seed", "3", "--company", "A1B2C3D4E5"),
		c.generated("traces.ach", "ach", "--entries", "300", "--seed", "4", "--trace-start", "301"),
	}
	sums := c.ingest(0, files...)
	var posted int64
	for _, s := range sums {
		if s.Posted == 0 || s.Duplicates != 0 || s.Conflicts != 0 || s.Quarantined != 0 || s.Posted+s.Notices != entries {
			t.Fatalf("%s: %+v, want every entry posted or a prenote", s.File, s)
		}
		posted += s.Posted
	}
	if n := c.postings(); n != posted {
		t.Fatalf("%d postings, want %d", n, posted)
	}
	for _, q := range []struct {
		sql  string
		want int64
	}{
		{`SELECT count(*) FROM postings WHERE tenant_id = $1 AND posting_key LIKE 'ach:1234567890:2026-03-03:%'`, sums[1].Posted},
		{`SELECT count(*) FROM postings WHERE tenant_id = $1 AND posting_key LIKE 'ach:A1B2C3D4E5:2026-03-02:%'`, sums[2].Posted},
		{`SELECT count(*) FROM postings WHERE tenant_id = $1 AND posting_key LIKE 'ach:1234567890:2026-03-02:12104288%'
		     AND right(posting_key, 7)::int > 300`, sums[3].Posted},
	} {
		if n := c.count(q.sql, c.tenant); n != q.want {
			t.Errorf("%s: %d, want %d", q.sql, n, q.want)
		}
	}
	if s := c.ingest(3, clash)[0]; s.Conflicts == 0 {
		t.Fatalf("a file of another seed and the same options did not conflict: %+v", s)
	}

	// ISO 8583: the next file of a seed starts its RRNs after the last's.
	isoFirst := c.ingest(-1, "--format", "iso8583", c.generated("first.rdw", "iso8583", "--messages", "500"))[0]
	isoNext := c.ingest(-1, "--format", "iso8583", c.generated("next.rdw", "iso8583", "--messages", "500", "--rrn-start", "100000501"))[0]
	if isoNext.Posted != isoFirst.Posted || isoNext.Duplicates != isoFirst.Duplicates || isoNext.Conflicts != 0 {
		t.Fatalf("the next ISO file met the first: %+v after %+v", isoNext, isoFirst)
	}
	if isoSame := c.ingest(-1, "--format", "iso8583", c.generated("same.rdw", "iso8583", "--messages", "500", "--seed", "1"))[0]; isoSame.Posted != 0 {
		t.Fatalf("the same ISO file again posted %d", isoSame.Posted)
	}

	// IPM: the next file of a day starts its ARNs after the last's and
	// takes the next file number; another day's ARNs carry that day.
	ipmFirst := c.ingest(0, c.generated("first.ipm", "ipm", "--presentments", "100", "--lifecycle"))[0]
	for _, args := range [][]string{
		{"--arn-start", "101", "--file-number", "2"},
		{"--date", "2026-03-03"},
	} {
		s := c.ingest(0, c.generated("ipm-"+args[1]+".ipm", append([]string{"ipm", "--presentments", "100", "--lifecycle"}, args...)...))[0]
		if s.Posted != ipmFirst.Posted || s.Duplicates != 0 || s.Conflicts != 0 {
			t.Fatalf("IPM %v met the first file: %+v after %+v", args, s, ipmFirst)
		}
	}

	// CSV: ids from --id-start.
	csvArgs := []string{"csv", "--preset", "signed-amount", "--rows", "100"}
	c.ingest(0, "--format", "csv", "--map", "preset:signed-amount", c.generated("first.csv", csvArgs...))
	s := c.ingest(0, "--format", "csv", "--map", "preset:signed-amount",
		c.generated("next.csv", append(csvArgs, "--id-start", "100", "--date", "2026-03-03")...))[0]
	if s.Posted != 100 || s.Duplicates != 0 || s.Conflicts != 0 {
		t.Fatalf("the next CSV file met the first: %+v", s)
	}
	if n := c.count(`SELECT count(*) FROM postings WHERE tenant_id = $1 AND source = 'signed-amount' AND value_date = '2026-03-03'`, c.tenant); n != 100 {
		t.Fatalf("%d CSV postings dated 2026-03-03, want 100", n)
	}
}

// A date that is not one, a company identification NACHA would refuse, a
// trace start past seven digits and the like are refused, and no file is
// left behind.
func TestGenerateRefusesBadDatesAndIDs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"ach", "--date", "2026-02-30"},
		{"ach", "--date", "03/02/2026"},
		{"ach", "--company", "acme"},
		{"ach", "--trace-start", "10000000"},
		{"iso8583", "--rrn-start", "999999999999"},
		{"ipm", "--arn-start", "-1"},
		{"csv", "--days", "-1"},
		{"camt", "--date", "tomorrow"},
	} {
		out := filepath.Join(dir, "out")
		r := runBinary(t, append(append([]string{"generate"}, args...), "--out", out)...)
		if r.code != exitUsage && r.code != exitError || !strings.Contains(r.stderr, "clearing: ") {
			t.Errorf("%v: want a refusal\n%v", args, r)
		}
		if args[1] == "--date" && r.code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, r.code, exitUsage)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v left %s behind: %v", args, out, err)
		}
	}
}
