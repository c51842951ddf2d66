package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clearing-dev/clearing/formats"
)

func TestCount(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {100000, "100,000"}, {1234567, "1,234,567"}} {
		t.Run(tc.want, func(t *testing.T) {
			if got := count(tc.n); got != tc.want {
				t.Errorf("count(%d) = %q, want %q", tc.n, got, tc.want)
			}
		})
	}
}

func TestReadMaxRSS(t *testing.T) {
	for _, tc := range []struct {
		name, report string
		want         int64
		wantErr      bool
	}{
		{"report", "\tCommand being timed: \"clearing ingest x\"\n\tMaximum resident set size (kbytes): 25140\n\tExit status: 0\n", 25140, false},
		{"after a non-zero exit", "Command exited with non-zero status 3\n\tMaximum resident set size (kbytes): 901\n", 901, false},
		{"no such line", "\tExit status: 0\n", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "time-v.txt")
			if err := os.WriteFile(path, []byte(tc.report), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := readMaxRSS(path)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("readMaxRSS = %d, %v; want %d, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestTailBufferKeepsTheEnd(t *testing.T) {
	tb := &tailBuffer{max: 8}
	for _, s := range []string{"first line\n", "second\n", "end"} {
		if _, err := tb.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if got := string(tb.Bytes()); got != "cond\nend" {
		t.Errorf("tail = %q, want the last 8 bytes %q", got, "cond\nend")
	}
}

func TestRatioFigure(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ratio   float64
		atLeast bool
		bound   string
		want    string
		met     string
	}{
		{"at least, met", 0.6, true, "", "0.60x", "yes"},
		{"at least, missed", 0.4, true, "", "0.40x", "no"},
		{"at most, met", 1.2, false, "", "1.20x", "yes"},
		{"at most, missed", 2, false, "", "2.00x", "no"},
		{"stopped: an upper bound never meets at least", 0.6, true, "<", "< 0.60x", "no"},
		{"stopped: a lower bound never meets at most", 1.2, false, ">", "> 1.20x", "no"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := 0.5
			if !tc.atLeast {
				target = 1.5
			}
			f := ratioFigure("x", "v", "b", tc.ratio, target, tc.atLeast, tc.bound)
			if f.ratio != tc.want || f.met != tc.met {
				t.Errorf("ratio %q met %q, want %q %q", f.ratio, f.met, tc.want, tc.met)
			}
		})
	}
}

func TestWriteMarkdownKeepsTheChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	hand := changesHeading + "\n\n- **Chunk size 50,000.** New-file ingest 0.16x to 0.20x.\n"
	old := "# Benchmarks\n\nold results\n\n" + hand
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	r := report{records: 1000, figures: []figure{{name: "ACH ingest", value: "1 records/s", met: "no"}}}
	if err := writeMarkdown(path, r); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(got)
	switch {
	case strings.Contains(s, "old results"):
		t.Error("the old results were kept")
	case !strings.HasSuffix(s, hand):
		t.Errorf("the hand-written section was not kept at the end:\n%s", s)
	case !strings.Contains(s, "| ACH ingest | 1 records/s |"):
		t.Errorf("the new figure is missing:\n%s", s)
	}
}

func TestWriteMarkdownStartsTheChanges(t *testing.T) {
	path := filepath.Join(t.TempDir(), "BENCHMARKS.md")
	if err := writeMarkdown(path, report{records: 1000}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), changesHeading+"\n\n"+firstChanges) {
		t.Errorf("a new report has no starting changes section:\n%s", got)
	}
}

// TestStatementPlantsOnePercent feeds the statement writer postings and
// notices and checks the file it writes against the counts it returns.
func TestStatementPlantsOnePercent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "statement.csv")
	s, err := newStatementWriter(path)
	if err != nil {
		t.Fatal(err)
	}
	const postings = 100_000
	day := formats.Date(2026, time.March, 2)
	for i := range postings {
		rec := formats.Record{Kind: formats.Clearing, Reference: fmt.Sprintf("12104288%07d", i),
			Amount: 100, Direction: formats.Debit, ValueDate: day.AddDate(0, 0, i%5)}
		if err := s.add(&rec); err != nil {
			t.Fatal(err)
		}
		if err := s.add(&formats.Record{Kind: formats.Notice, Reference: "notice", ValueDate: day}); err != nil {
			t.Fatal(err)
		}
	}
	p, err := s.close()
	if err != nil {
		t.Fatal(err)
	}
	breaks := p.missing + p.changed + p.extra + p.fees
	if breaks < postings*8/1000 || breaks > postings*12/1000 {
		t.Errorf("%d breaks in %d postings, want about 1%%", breaks, postings)
	}
	if p.matched+p.changed+p.missing != postings {
		t.Errorf("matched %d + changed %d + missing %d != %d postings", p.matched, p.changed, p.missing, postings)
	}
	if p.from != day || p.to != day.AddDate(0, 0, 4) {
		t.Errorf("period %s to %s", p.from, p.to)
	}
	lines := countLines(t, path) - 1 // the header
	if lines != p.lines || p.lines != postings-p.missing+p.extra+p.fees {
		t.Errorf("%d lines in the file, %d counted, want %d", lines, p.lines, postings-p.missing+p.extra+p.fees)
	}
}

func countLines(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var n int64
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if strings.Contains(sc.Text(), "notice") {
			t.Fatalf("a notice reached the statement: %s", sc.Text())
		}
		n++
	}
	return n
}
