package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
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

// TestWriteMarkdownModes checks that the scale run and the check write
// files of their own, whole, and that the bench's file says how to run them.
func TestWriteMarkdownModes(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		mode, title, about string
	}{
		{modeScale, "# Benchmarks at scale\n", scaleAbout},
		{modeCheck, "# The independent check\n", checkAbout},
		{modeBench, "# Benchmarks\n", howAndWhat},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			path := filepath.Join(dir, tc.mode+".md")
			if err := os.WriteFile(path, []byte("old\n"+changesHeading+"\n\nkept\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := writeMarkdown(path, report{mode: tc.mode, records: 1000, runs: 3}); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			s := string(got)
			kept := strings.HasSuffix(s, changesHeading+"\n\nkept\n")
			switch {
			case !strings.HasPrefix(s, tc.title):
				t.Errorf("title: %q", s[:min(len(s), 40)])
			case !strings.Contains(s, tc.about):
				t.Error("the fixed text is missing")
			case kept != (tc.mode == modeBench):
				t.Errorf("changes section kept: %v", kept)
			case !strings.Contains(s, "measured 3 times, interleaved"):
				t.Error("the runs are not said")
			}
		})
	}
	for _, s := range []string{"make bench-check", "make bench-scale", "0.75x", "0.85x", "2.0x", "64 MiB"} {
		if !strings.Contains(howAndWhat, s) {
			t.Errorf("docs/BENCHMARKS.md does not mention %q", s)
		}
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

// A changed amount is never zero, which would make the line a notice.
func TestChangedAmountIsNeverZero(t *testing.T) {
	for _, c := range []struct{ amount, delta, want int64 }{{-500, 500, 1}, {-500, 499, -1}, {100, 7, 107}} {
		if got := changedAmount(c.amount, c.delta); got != c.want {
			t.Errorf("changedAmount(%d, %d) = %d, want %d", c.amount, c.delta, got, c.want)
		}
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

func TestSpreadOf(t *testing.T) {
	for _, tc := range []struct {
		name        string
		xs          []float64
		med, lo, hi float64
		n           int
	}{
		{"none", nil, 0, 0, 0, 0},
		{"one", []float64{2}, 2, 2, 2, 1},
		{"three, unordered", []float64{3, 1, 2}, 2, 1, 3, 3},
		{"the median is not the mean", []float64{1, 1.1, 9}, 1.1, 1, 9, 3},
		{"even count: the mean of the middle two", []float64{4, 1, 2, 3}, 2.5, 1, 4, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := spreadOf(tc.xs)
			if s.med != tc.med || s.lo != tc.lo || s.hi != tc.hi || s.n != tc.n {
				t.Errorf("spreadOf(%v) = %+v, want median %v, %v–%v over %d", tc.xs, s, tc.med, tc.lo, tc.hi, tc.n)
			}
		})
	}
	xs := []float64{3, 1, 2}
	spreadOf(xs)
	if xs[0] != 3 || xs[1] != 1 {
		t.Errorf("spreadOf sorted its argument: %v", xs)
	}
}

func TestSpreadText(t *testing.T) {
	three := spreadOf([]float64{36122.7, 35010, 37400})
	one := spreadOf([]float64{0.333})
	for _, tc := range []struct{ got, want string }{
		{three.rateText("records/s"), "36,122 records/s (35,010–37,400)"},
		{spreadOf([]float64{0.33, 0.31, 0.35}).ratioText(), "0.33x (0.31–0.35)"},
		{spreadOf([]float64{6.29, 6.1, 6.8}).secondsText(), "6.29 s (6.10–6.80)"},
		{spreadOf([]float64{30, 29, 31}).mibText(), "30 MiB (29–31)"},
		{one.ratioText(), "0.33x"}, // one run has no range
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestTargetText(t *testing.T) {
	for target, want := range map[float64]string{0.5: "0.5x", 0.75: "0.75x", 0.85: "0.85x", 2: "2.0x", 1.3: "1.3x"} {
		if got := targetText(target); got != want {
			t.Errorf("targetText(%v) = %q, want %q", target, got, want)
		}
	}
}

// fakeRun builds an ingestRun of rows whose steps took the given seconds.
func fakeRun(rows int64, copyS, firstS, againS, floorNewS, floorAgainS float64) ingestRun {
	d := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	r := ingestRun{rows: rows, copyTook: d(copyS), first: ran{wall: d(firstS), rssKiB: 30 << 10}, again: ran{wall: d(againS), rssKiB: 31 << 10}}
	r.floor.ways[floorOnConflict] = d(floorNewS * 1.1)
	r.floor.ways[floorPlain] = d(floorNewS)
	r.floor.again = d(floorAgainS)
	return r
}

// TestSeriesTakesRatiosRunByRun holds the ratios to the runs they were
// measured in: the median of per-run ratios, not the ratio of medians, and
// nothing from a run that was stopped.
func TestSeriesTakesRatiosRunByRun(t *testing.T) {
	runs := []ingestRun{
		fakeRun(1000, 1, 2, 4, 1.5, 2), // new file vs COPY 0.5, vs floor 0.75
		fakeRun(1000, 2, 3, 4, 1.5, 2), // 0.67, 0.5: a slow COPY and a slow ingest together
		fakeRun(1000, 1, 4, 4, 2, 2),   // 0.25, 0.5
		{rows: 1000, copyTook: time.Second, first: ran{wall: time.Hour}, firstOut: true},
	}
	s := seriesOf(runs)
	near := func(name string, got spread, med, lo, hi float64) {
		t.Helper()
		if got.n != 3 || math.Abs(got.med-med) > 1e-9 || math.Abs(got.lo-lo) > 1e-9 || math.Abs(got.hi-hi) > 1e-9 {
			t.Errorf("%s = %+v, want median %v, %v–%v over 3 runs", name, got, med, lo, hi)
		}
	}
	near("new file vs COPY", s.newVsCopy, 0.5, 0.25, 2.0/3)
	near("new file vs floor", s.newVsFloor, 0.5, 0.5, 0.75)
	near("re-ingest vs COPY", s.againVsCopy, 0.25, 0.25, 0.5)
	near("re-ingest vs floor", s.againVsFloor, 0.5, 0.5, 0.5)
	near("the floor is the faster way", s.floorNewRate, 1000/1.5, 500, 1000/1.5)
	near("peak RSS, new file", s.rssFirst, 30, 30, 30)
	// The ratio of the medians would be 333/1000.
	if r := s.firstRate.med / s.copyRate.med; math.Abs(r-1.0/3) > 1e-9 {
		t.Errorf("median rates %v and %v", s.firstRate.med, s.copyRate.med)
	}
}

func TestFloorNewFileIsTheFasterWay(t *testing.T) {
	var r floorResult
	r.ways[floorOnConflict] = 3 * time.Second
	if d, w := r.newFile(); d != 3*time.Second || w != floorOnConflict {
		t.Errorf("one way measured: %v %v", d, w)
	}
	r.ways[floorPlain] = 2 * time.Second
	if d, w := r.newFile(); d != 2*time.Second || w != floorPlain {
		t.Errorf("two ways: %v %v, want the plain INSERT's 2s", d, w)
	}
}

// TestReportIngestFigures checks that a format gets every figure of the
// target table, judged by the median.
func TestReportIngestFigures(t *testing.T) {
	b := newBench("", t.TempDir(), nil, 1000, 3, time.Minute, io.Discard)
	cr := &caseResult{c: ingestCase{name: "CSV", unit: "rows"}, runs: []ingestRun{
		fakeRun(1000, 1, 1.6, 1.2, 1.5, 1), fakeRun(1000, 1, 1.8, 1.3, 1.5, 1), fakeRun(1000, 1, 2.5, 1.4, 2, 1),
	}, pkTook: time.Second}
	b.reportIngest(cr)
	want := map[string]struct{ target, met string }{
		"CSV ingest, new file, 1,000 rows":               {"≥ 0.5x", "yes"},  // 1/1.8 = 0.56
		"CSV re-ingest, 100% duplicates, 1,000 rows":     {"≥ 0.75x", "yes"}, // 1/1.3 = 0.77
		"CSV ingest, new file, against the ledger floor": {"≥ 0.85x", "no"},  // 1.5/1.8 = 0.83
		"CSV re-ingest, against the ledger floor":        {"≥ 0.85x", "no"},  // 1/1.3 = 0.77
		"peak RSS, CSV ingest, new file / re-ingest":     {"< 64 MiB", "yes"},
	}
	for _, f := range b.figures {
		w, ok := want[f.name]
		if !ok {
			t.Errorf("unexpected figure %q", f.name)
			continue
		}
		delete(want, f.name)
		if f.target != w.target || f.met != w.met {
			t.Errorf("%s: target %q met %q, want %q %q", f.name, f.target, f.met, w.target, w.met)
		}
	}
	for name := range want {
		t.Errorf("missing figure %q", name)
	}
	if f := b.figures[0]; f.ratio != "0.56x (0.40–0.62)" || !strings.Contains(f.baseline, "COPY 1,000 rows/s") {
		t.Errorf("new file: ratio %q baseline %q", f.ratio, f.baseline)
	}
}

// TestReportStoppedIngest checks that a format whose only run was stopped
// is reported as a bound that misses its target.
func TestReportStoppedIngest(t *testing.T) {
	b := newBench("", t.TempDir(), nil, 1000, 3, time.Minute, io.Discard)
	cr := &caseResult{c: ingestCase{name: "ISO 8583", unit: "messages"}, stopped: true,
		runs: []ingestRun{{rows: 1000, copyTook: time.Second, first: ran{wall: time.Minute}, firstOut: true}}}
	b.reportIngest(cr)
	if len(b.figures) != 2 || b.figures[0].ratio != "< 0.02x" || b.figures[0].met != "no" || b.figures[1].met != "no" {
		t.Errorf("figures of a stopped run: %+v", b.figures)
	}
}

func TestReportScale(t *testing.T) {
	b := newBench("", t.TempDir(), nil, 10_000, 1, time.Minute, io.Discard)
	mk := func(entries int, wallS [scaleSteps]float64, rssMiB int64) scaleSize {
		s := scaleSize{entries: entries}
		for i := range scaleSteps {
			s.steps[i] = ran{wall: time.Duration(wallS[i] * float64(time.Second)), rssKiB: rssMiB << 10}
			s.items[i] = int64(entries)
		}
		return s
	}
	small := mk(1000, [scaleSteps]float64{1, 1, 1, 1}, 30)
	large := mk(10_000, [scaleSteps]float64{10, 12, 14, 9}, 31) // 1.0x, 1.2x, 1.4x, 0.9x
	b.reportScale(small, large)
	wantMet := []string{"yes", "yes", "no", "yes", "yes", "yes", "yes", "yes"}
	if len(b.figures) != len(wantMet) {
		t.Fatalf("%d figures, want %d", len(b.figures), len(wantMet))
	}
	for i, f := range b.figures {
		if f.met != wantMet[i] {
			t.Errorf("%s: met %q, want %q (ratio %s)", f.name, f.met, wantMet[i], f.ratio)
		}
	}
	if f := b.figures[2]; f.ratio != "1.40x" || f.target != "≤ 1.3x" {
		t.Errorf("statement import: ratio %q target %q", f.ratio, f.target)
	}
	b.figures = nil
	b.reportScale(small, mk(10_000, [scaleSteps]float64{10, 10, 10, 10}, 70))
	for _, f := range b.figures[scaleSteps:] {
		if f.met != "no" {
			t.Errorf("%s: 70 MiB met the limit", f.name)
		}
	}
}

func TestCheckDisk(t *testing.T) {
	dir := t.TempDir()
	if err := checkDisk(1000, dir, "postgres://x"); err != nil {
		t.Errorf("1,000 records: %v", err)
	}
	if err := checkDisk(1<<40, dir, ""); err == nil || !strings.Contains(err.Error(), "GiB free") {
		t.Errorf("2^40 records: %v, want a want of disk", err)
	}
}

func TestParseFlagsModes(t *testing.T) {
	t.Setenv("CLEARING_BENCH_DATABASE_URL", "")
	for _, tc := range []struct {
		name    string
		args    []string
		mode    string
		records int
		out     string
		runs    int
		timeout time.Duration
	}{
		{"bench", nil, modeBench, 1_000_000, "docs/BENCHMARKS.md", 3, 10 * time.Minute},
		{"scale", []string{"-scale"}, modeScale, 9_980_000, "docs/BENCHMARKS-scale.md", 1, 3 * time.Hour},
		{"scale, sized", []string{"-scale", "-records", "20000", "-out", "", "-runs", "3", "-command-timeout", "1m"}, modeScale, 20_000, "", 1, time.Minute},
		{"check", []string{"-check"}, modeCheck, 200_000, "", 3, 10 * time.Minute},
		{"check to a file", []string{"-check", "-out", "check.md", "-runs", "1"}, modeCheck, 200_000, "check.md", 1, 10 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseFlags(tc.args, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if o.mode != tc.mode || o.records != tc.records || o.out != tc.out || o.runs != tc.runs || o.timeout != tc.timeout {
				t.Errorf("got %+v", o)
			}
		})
	}
	for _, args := range [][]string{{"-scale", "-check"}, {"-runs", "0"}, {"-records", "10"}, {"extra"}} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("%v: accepted", args)
		}
	}
}
