package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clearing-dev/clearing/formats/ach"
)

// warningsLike counts the warnings of the test tenant's runs that contain s.
func (c *cli) warningsLike(s string) int64 {
	c.t.Helper()
	return c.count(`SELECT count(*) FROM runs r, unnest(r.warnings) w WHERE r.tenant_id = $1 AND strpos(w, $2) > 0`, c.tenant, s)
}

// achLines edits the lines of an ACH file.
func achLines(data []byte, edit func(i int, l string) string) []byte {
	ls := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	for i, l := range ls {
		ls[i] = edit(i, l)
	}
	return []byte(strings.Join(ls, "\n") + "\n")
}

// wrongCheckDigit changes the last digit of the immediate destination.
func wrongCheckDigit(l string) string {
	d := (l[12]-'0'+1)%10 + '0'
	return l[:12] + string(rune(d)) + l[13:]
}

// TestMetadataWarningsDoNotStopTheMoney guards that an ACH file whose header
// has a wrong check digit, a priority code 00 and a single batch numbered 0
// posts every entry, with the findings kept as warnings on its run; and that
// a returns file from a bank, with the same header fault and return trace
// numbers that do not start with the batch's ODFI, reverses its originals.
func TestMetadataWarningsDoNotStopTheMoney(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	es := liveOnly(entries(7, 40))
	var b bytes.Buffer
	if err := ach.WriteEntries(&b, ach.DefaultHeader(created), slices.Values(es)); err != nil {
		t.Fatal(err)
	}
	fwd := achLines(b.Bytes(), func(i int, l string) string {
		switch {
		case i == 0:
			return "100" + wrongCheckDigit(l)[3:]
		case l[0] == '5' || l[0] == '8':
			return l[:87] + "0000000"
		}
		return l
	})
	if bytes.Count(fwd, []byte("\n5")) != 1 {
		t.Skip("the generator wrote more than one batch")
	}
	s := c.ingest(0, c.file("fwd.ach", fwd))[0]
	if s.Status != "done" || s.Posted != int64(len(es)) {
		t.Fatalf("forward file: %+v", s)
	}
	if c.postings() != int64(len(es)) {
		t.Fatalf("postings %d, want %d", c.postings(), len(es))
	}
	for _, w := range []string{"file_header", "priority_code", "batch_number"} {
		if c.warningsLike(w) == 0 {
			t.Errorf("no %s warning on the run", w)
		}
	}

	ret := ach.ReturnOf(es[0], "R01", 1)
	b.Reset()
	if err := ach.WriteReturns(&b, ach.DefaultHeader(created.Add(48*time.Hour)), slices.Values([]ach.Return{ret})); err != nil {
		t.Fatal(err)
	}
	rf := achLines(b.Bytes(), func(i int, l string) string {
		switch {
		case i == 0:
			return wrongCheckDigit(l)
		case l[0] == '6':
			return l[:79] + "99999999" + l[87:]
		}
		return l
	})
	s = c.ingest(0, c.file("ret.ach", rf))[0]
	if s.Status != "done" || s.Posted != 1 {
		t.Fatalf("returns file: %+v", s)
	}
	if n := c.count(`SELECT count(*) FROM postings WHERE tenant_id = $1 AND kind = 'return' AND posting_key = $2`, c.tenant, es[0].Key()+":return"); n != 1 {
		t.Fatalf("return postings %d, want 1", n)
	}
	if c.warningsLike("trace_prefix") == 0 {
		t.Error("no trace_prefix warning on the run")
	}
}

// TestACHLookalikeNamesLineOne guards that a batch without a file header is
// refused as an unknown format that names line 1 and what it holds.
func TestACHLookalikeNamesLineOne(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	var b bytes.Buffer
	if err := ach.WriteEntries(&b, ach.DefaultHeader(created), slices.Values(liveOnly(entries(3, 3)))); err != nil {
		t.Fatal(err)
	}
	_, body, _ := bytes.Cut(b.Bytes(), []byte("\n"))
	r := c.run("ingest", c.file("batch.ach", body))
	if r.code != 1 || !strings.Contains(r.stderr, "line 1") || !strings.Contains(r.stderr, "type \"5\"") {
		t.Fatalf("want a refusal naming line 1:\n%v", r)
	}
	if c.postings() != 0 {
		t.Fatal("something posted")
	}
}

// TestBAI2RecordsOnOneLineImportTwiceOnce guards that a BAI2 statement with
// several records on one line, a creation time with colons, a blank control
// total of an account without activity and a 99 without its slash imports,
// with warnings, and that importing it again adds nothing.
func TestBAI2RecordsOnOneLineImportTwiceOnce(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	stmt := "\ufeff\n01,BANK,CUST,261129,14:59:35,1,,,2/  02,CUST,BANK,1,261129,,USD,2/\n" +
		"03,1234567,,010,1000,,/ 16,142,2500,Z,REF1,,TRANSFER PPD/ 16,451,500,Z,REF2,,FEE/\n" +
		"49,4000,4/  03,7654321,,010,,,/\n49,,2/\n98,4000,2,8/\n99,4000,1,10\n"
	f := c.file("stmt.bai2", []byte(stmt))
	for i, want := range []int64{2, 2} {
		r := c.run("statement", "import", "--source", "bank", f)
		if r.code != 0 {
			t.Fatalf("import %d:\n%v", i+1, r)
		}
		if n := c.count(`SELECT count(*) FROM statement_lines WHERE tenant_id = $1`, c.tenant); n != want {
			t.Fatalf("import %d: %d statement lines, want %d", i+1, n, want)
		}
	}
	for _, w := range []string{"records_on_one_line", "time_format", "blank_total", "no_slash"} {
		if c.warningsLike(w) == 0 {
			t.Errorf("no %s warning on the run", w)
		}
	}
}

// TestBAI2ControlTotalsStillRefuse guards that an account total that does
// not add up refuses the statement, naming its line.
func TestBAI2ControlTotalsStillRefuse(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	stmt := "01,BANK,CUST,261129,1459,1,,,2/\n02,CUST,BANK,1,261129,,USD,2/\n" +
		"03,1234567,,010,1000,,/\n16,142,2500,Z,REF1,,TRANSFER PPD/\n49,9999,3/\n98,9999,1,5/\n99,9999,1,7/\n"
	r := c.run("statement", "import", "--source", "bank", c.file("bad.bai2", []byte(stmt)))
	if r.code != 1 || !strings.Contains(r.stderr, "line 5") {
		t.Fatalf("want a refusal naming line 5:\n%v", r)
	}
	if n := c.count(`SELECT count(*) FROM statement_lines WHERE tenant_id = $1`, c.tenant); n != 0 {
		t.Fatalf("%d statement lines imported", n)
	}
}

// TestLoosenedChecksAreRecorded guards that a loosened money check is named
// on the run.
func TestLoosenedChecksAreRecorded(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	f := c.achFile("fwd.ach", ach.DefaultHeader(created), liveOnly(entries(5, 5)))
	c.ingest(0, "--ach-loosen-trace-prefix", f)
	if c.warningsLike("loosened: ach trace-prefix") == 0 {
		t.Fatal("the loosened check is not on the run")
	}
}
