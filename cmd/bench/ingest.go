package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/formats/registry"
	"github.com/clearing-dev/clearing/ingest"
)

// summary is what 'clearing ingest -o json' prints for one file: the
// command line's documented contract, decoded into the type that defines
// it.
type summary = ingest.Summary

// staged is the number of records the ledger is handed: every record read
// except those skipped (responses, network messages).
func staged(s summary) int64 { return s.Records - s.Skipped }

// The targets of the ingest figures (ratios of records/s).
const (
	newFileTarget  = 0.5  // a new file against COPY of the same rows
	reingestTarget = 0.75 // a re-ingest, every record a duplicate, against the same COPY
	floorTarget    = 0.85 // either against the ledger floor of the same rows
	rssLimitMiB    = 64   // peak RSS of any clearing command
)

// ingestCase is one format's ingest measurement.
type ingestCase struct {
	name   string // "ACH", "ISO 8583", "CSV"
	unit   string // "entries", "messages", "rows"
	file   string
	tenant string // each run adds its number
	flags  []string
	accept []int // exit codes of a correct run on this file
	reader registry.Options
	source string
	visit  func(*formats.Record) error
}

// ingestRun is what one run of an ingestCase measured.
type ingestRun struct {
	rows               int64
	copyTook           time.Duration
	floor              floorResult
	first, again       ran
	firstOut, againOut bool // stopped at the time limit
	firstSum           summary
	tenant             string
}

// complete says whether the run measured the new file, the re-ingest and
// the floor.
func (r ingestRun) complete() bool { return !r.firstOut && !r.againOut && r.floor.again > 0 }

// caseResult is every run of one ingestCase.
type caseResult struct {
	c       ingestCase
	runs    []ingestRun
	pkTook  time.Duration // COPY into a table with the primary key alone, run 1
	stopped bool          // a run was stopped at the time limit; later runs skip the case
}

// measureIngestRun times, back to back on the same server: COPY of the
// file's rows into postings' twin (and, in run 1, into a table with the
// primary key alone), the ingest of the file under a new tenant, the ingest
// of the same file again under the same tenant, and the ledger floor
// (floor.go). The floor runs last, so that the ingest runs find the server
// as they did before it was measured.
func (b *bench) measureIngestRun(ctx context.Context, c ingestCase, run int, cr *caseResult) error {
	res := ingestRun{tenant: c.tenant + "-" + strconv.Itoa(run)}
	c.reader.Allowed = []string{c.reader.Format}
	rows, err := readRows(c.file, c.reader, c.source, c.visit)
	if err != nil {
		return err
	}
	res.rows = int64(len(rows))
	if res.copyTook, err = b.copyRows(ctx, baselineTable, createBaseline, c.source, rows); err != nil {
		return err
	}
	if run == 1 {
		if cr.pkTook, err = b.copyRows(ctx, baselinePKTable, createBaselinePK, c.source, rows); err != nil {
			return err
		}
	}
	args := append(append([]string{"ingest", "-o", "json", "--tenant", res.tenant}, c.flags...), c.file)
	b.srv.checkpoint(ctx)
	res.first, err = b.clearing(ctx, c.accept, "", args...)
	if res.firstOut = errors.Is(err, errTimedOut); res.firstOut {
		b.warn("run %d: %v; the re-ingest was not run, since it would resume the stopped run, nor were later runs of %s", run, err, c.name)
		cr.runs, cr.stopped = append(cr.runs, res), true
		return nil
	}
	if err != nil {
		return err
	}
	if res.firstSum, err = checkIngest(res.first, res.rows, false); err != nil {
		return err
	}
	b.srv.checkpoint(ctx)
	res.again, err = b.clearing(ctx, c.accept, "", args...)
	if res.againOut = errors.Is(err, errTimedOut); res.againOut {
		b.warn("run %d: %v; later runs of %s were not made", run, err, c.name)
		cr.runs, cr.stopped = append(cr.runs, res), true
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := checkIngest(res.again, res.rows, true); err != nil {
		return err
	}
	// Run 1 measures every way of writing the floor's postings; later runs
	// only the one that was faster in run 1, to keep the whole within time.
	ways := []floorWay{floorOnConflict, floorPlain}
	if len(cr.runs) > 0 && cr.runs[0].floor.again > 0 {
		_, best := cr.runs[0].floor.newFile()
		ways = []floorWay{best}
	}
	if res.floor, err = b.floor(ctx, c.source, rows, ways); err != nil {
		return err
	}
	floorNew, _ := res.floor.newFile()
	fmt.Fprintf(b.out, "  run %d, %s: COPY %s, ingest %s, re-ingest %s, floor %s / %s\n", run, c.name,
		seconds(res.copyTook), seconds(res.first.wall), seconds(res.again.wall), seconds(floorNew), seconds(res.floor.again))
	cr.runs = append(cr.runs, res)
	return nil
}

// checkIngest reads an ingest's summary and fails when it does not account
// for every staged record, or when a re-ingest posted anything: that would
// be a double posting, and no figure measured after it would mean much.
func checkIngest(r ran, want int64, again bool) (summary, error) {
	var sums []summary
	if err := json.Unmarshal(r.stdout, &sums); err != nil || len(sums) != 1 {
		return summary{}, fmt.Errorf("clearing %v: not one JSON summary (%v): %s", r.args, err, r.stdout)
	}
	s := sums[0]
	total := s.Total() - s.Skipped
	switch {
	case s.Status != "done":
		return s, fmt.Errorf("clearing %v: status %q", r.args, s.Status)
	case staged(s) != want || total != want:
		return s, fmt.Errorf("clearing %v: %d records staged and %d accounted for; the file has %d", r.args, staged(s), total, want)
	case again && (s.Posted != 0 || s.Notices != 0):
		return s, fmt.Errorf("clearing %v: the second ingest of the same file posted %d records and %d notices", r.args, s.Posted, s.Notices)
	}
	return s, nil
}

// ingestSeries are one case's measurements over its complete runs, as
// spreads, with the per-run ratios that the targets are judged by.
type ingestSeries struct {
	copyRate, firstRate, againRate, floorNewRate, floorAgainRate spread
	newVsCopy, againVsCopy, newVsFloor, againVsFloor             spread
	floorNewVsCopy, floorAgainVsCopy                             spread
	wall                                                         [5]spread // seconds: COPY, new file, re-ingest, floor new file, floor re-ingest
	rssFirst, rssAgain                                           spread
}

func seriesOf(runs []ingestRun) ingestSeries {
	var done []ingestRun
	for _, r := range runs {
		if r.complete() {
			done = append(done, r)
		}
	}
	of := func(f func(r ingestRun) float64) spread {
		return spreadOf(pairs(done, func(r ingestRun) (float64, bool) { return f(r), true }))
	}
	rateOf := func(d func(r ingestRun) time.Duration) func(r ingestRun) float64 {
		return func(r ingestRun) float64 { return rate(r.rows, d(r)) }
	}
	copyT := func(r ingestRun) time.Duration { return r.copyTook }
	firstT := func(r ingestRun) time.Duration { return r.first.wall }
	againT := func(r ingestRun) time.Duration { return r.again.wall }
	floorNewT := func(r ingestRun) time.Duration { d, _ := r.floor.newFile(); return d }
	floorAgainT := func(r ingestRun) time.Duration { return r.floor.again }
	// a/b as rates is b's time over a's.
	vs := func(a, b func(r ingestRun) time.Duration) spread {
		return of(func(r ingestRun) float64 { return b(r).Seconds() / a(r).Seconds() })
	}
	s := ingestSeries{
		copyRate: of(rateOf(copyT)), firstRate: of(rateOf(firstT)), againRate: of(rateOf(againT)),
		floorNewRate: of(rateOf(floorNewT)), floorAgainRate: of(rateOf(floorAgainT)),
		newVsCopy: vs(firstT, copyT), againVsCopy: vs(againT, copyT),
		newVsFloor: vs(firstT, floorNewT), againVsFloor: vs(againT, floorAgainT),
		floorNewVsCopy: vs(floorNewT, copyT), floorAgainVsCopy: vs(floorAgainT, copyT),
		rssFirst: of(func(r ingestRun) float64 { return r.first.rssMiB() }),
		rssAgain: of(func(r ingestRun) float64 { return r.again.rssMiB() }),
	}
	for i, d := range []func(r ingestRun) time.Duration{copyT, firstT, againT, floorNewT, floorAgainT} {
		s.wall[i] = of(func(r ingestRun) float64 { return d(r).Seconds() })
	}
	return s
}

// reportIngest adds one format's figures: the new file and the re-ingest,
// each next to the COPY of the same rows and next to the ledger floor, and
// the peak memory of both.
func (b *bench) reportIngest(cr *caseResult) {
	c, s := cr.c, seriesOf(cr.runs)
	n := count(int64(b.n)) + " " + c.unit
	newName, againName := c.name+" ingest, new file, "+n, c.name+" re-ingest, 100% duplicates, "+n
	if s.copyRate.n == 0 {
		b.reportStopped(cr, newName, againName)
		return
	}
	copyBase := "COPY " + s.copyRate.rateText("rows/s")
	b.addFigure(ratioSpreadFigure(newName, s.firstRate.rateText("records/s"), copyBase, s.newVsCopy, newFileTarget, true, ""))
	b.addFigure(ratioSpreadFigure(againName, s.againRate.rateText("records/s"), copyBase, s.againVsCopy, reingestTarget, true, ""))
	b.addFigure(ratioSpreadFigure(c.name+" ingest, new file, against the ledger floor", s.firstRate.rateText("records/s"),
		"floor "+s.floorNewRate.rateText("rows/s"), s.newVsFloor, floorTarget, true, ""))
	b.addFigure(ratioSpreadFigure(c.name+" re-ingest, against the ledger floor", s.againRate.rateText("records/s"),
		"floor "+s.floorAgainRate.rateText("rows/s"), s.againVsFloor, floorTarget, true, ""))
	worst := max(s.rssFirst.hi, s.rssAgain.hi)
	b.addFigure(figure{
		name:  "peak RSS, " + c.name + " ingest, new file / re-ingest",
		value: s.rssFirst.mibText() + " / " + s.rssAgain.mibText(), target: fmt.Sprintf("< %d MiB", rssLimitMiB),
		met: yesNo(worst < rssLimitMiB),
	})
	if cr.pkTook > 0 {
		b.addDetail(c.name+": COPY, primary key only (run 1)", fmt.Sprintf("%s rows/s (%s)", perSecond(cr.runs[0].rows, cr.pkTook), seconds(cr.pkTook)))
	}
	b.addDetail(c.name+": the ledger floor against COPY, new file / re-ingest", s.floorNewVsCopy.ratioText()+" / "+s.floorAgainVsCopy.ratioText())
	first := cr.runs[0]
	var ways []string
	for w, d := range first.floor.ways {
		if d > 0 {
			ways = append(ways, fmt.Sprintf("%s %s rows/s", floorWay(w), perSecond(first.rows, d)))
		}
	}
	_, best := first.floor.newFile()
	b.addDetail(c.name+": the floor's new file, run 1", fmt.Sprintf("%s; later runs measure only the %s", strings.Join(ways, "; "), best))
	b.addDetail(c.name+": seconds, COPY / new file / re-ingest / floor new file / floor re-ingest",
		s.wall[0].secondsText()+" / "+s.wall[1].secondsText()+" / "+s.wall[2].secondsText()+" / "+s.wall[3].secondsText()+" / "+s.wall[4].secondsText())
	sum := first.firstSum
	b.addDetail(c.name+": what the new file did", fmt.Sprintf("%s records, %s skipped, %s posted, %s notices, %s quarantined, exit %d",
		count(sum.Records), count(sum.Skipped), count(sum.Posted), count(sum.Notices), count(sum.Quarantined), first.first.exit))
}

// reportStopped reports a case of which no run finished: its figures are
// bounds from the stopped run.
func (b *bench) reportStopped(cr *caseResult, newName, againName string) {
	c := cr.c
	r := cr.runs[len(cr.runs)-1]
	base := fmt.Sprintf("COPY %s rows/s (%s)", perSecond(r.rows, r.copyTook), seconds(r.copyTook))
	copyRate := rate(r.rows, r.copyTook)
	b.addFigure(ingestFigure(newName, base, r.rows, r.first, r.firstOut, copyRate, newFileTarget))
	if r.firstOut {
		b.addFigure(figure{name: againName, value: "not measured: the new file's ingest did not finish", baseline: base,
			target: "≥ " + targetText(reingestTarget), met: "no"})
	} else {
		b.addFigure(ingestFigure(againName, base, r.rows, r.again, r.againOut, copyRate, reingestTarget))
	}
	b.addDetail(c.name+": the ledger floor", "not measured: the ingest was stopped")
}

// ingestFigure is the figure of one ingest run; a stopped run gives a
// bound.
func ingestFigure(name, base string, rows int64, r ran, stopped bool, copyRate, target float64) figure {
	value, bound := fmt.Sprintf("%s records/s (%s)", perSecond(rows, r.wall), seconds(r.wall)), ""
	if stopped {
		value, bound = fmt.Sprintf("< %s records/s (stopped after %s)", perSecond(rows, r.wall), r.wall), "<"
	}
	return ratioFigure(name, value, base, rate(rows, r.wall)/copyRate, target, true, bound)
}
