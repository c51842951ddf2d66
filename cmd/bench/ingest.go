package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// ingestCase is one format's ingest measurement.
type ingestCase struct {
	name   string // "ACH", "ISO 8583", "CSV"
	unit   string // "entries", "messages", "rows"
	file   string
	tenant string
	flags  []string // format flags for 'clearing ingest'
	accept []int    // exit codes of a correct run on this file
	reader registry.Options
	source string
	visit  func(*formats.Record) error
}

// ingestResult is what measuring one ingestCase found.
type ingestResult struct {
	rows               int64
	copyTook           time.Duration
	floorNew           time.Duration // the ledger floor (floor.go), new file
	floorAgain         time.Duration // and the same rows again, audited
	first, again       ran
	firstOut, againOut bool // stopped at the time limit
	firstSum           summary
}

// measureIngest times, back to back on the same server: COPY of the file's
// rows into postings' twin, COPY into a table with the primary key alone,
// the ingest of the file under a new tenant, the ingest of the same file
// again under the same tenant, and the ledger floor (floor.go).
func (b *bench) measureIngest(ctx context.Context, c ingestCase) (ingestResult, error) {
	var res ingestResult
	c.reader.Allowed = []string{c.reader.Format}
	rows, err := readRows(c.file, c.reader, c.source, c.visit)
	if err != nil {
		return res, err
	}
	res.rows = int64(len(rows))
	if res.copyTook, err = b.copyRows(ctx, baselineTable, createBaseline, c.source, rows); err != nil {
		return res, err
	}
	pkTook, err := b.copyRows(ctx, baselinePKTable, createBaselinePK, c.source, rows)
	if err != nil {
		return res, err
	}
	rows = nil // the rows can take hundreds of MiB; free them before ingest runs
	b.addDetail(c.name+": COPY, primary key only", fmt.Sprintf("%s rows/s (%s)", perSecond(res.rows, pkTook), seconds(pkTook)))
	args := append(append([]string{"ingest", "-o", "json", "--tenant", c.tenant}, c.flags...), c.file)
	b.srv.checkpoint(ctx)
	res.first, err = b.clearing(ctx, c.accept, "", args...)
	if res.firstOut = errors.Is(err, errTimedOut); res.firstOut {
		b.warn("%v; the re-ingest was not run, since it would resume the stopped run", err)
		b.reportIngest(c, res)
		return res, nil
	}
	if err != nil {
		return res, err
	}
	if res.firstSum, err = checkIngest(res.first, res.rows, false); err != nil {
		return res, err
	}
	b.srv.checkpoint(ctx)
	res.again, err = b.clearing(ctx, c.accept, "", args...)
	if res.againOut = errors.Is(err, errTimedOut); res.againOut {
		b.warn("%v", err)
	} else if err != nil {
		return res, err
	} else if _, err := checkIngest(res.again, res.rows, true); err != nil {
		return res, err
	}
	// The floor runs last, so that the ingest runs find the server as they
	// did before it was measured. The rows are read again rather than held.
	if rows, err = readRows(c.file, c.reader, c.source, nil); err != nil {
		return res, err
	}
	if res.floorNew, res.floorAgain, err = b.floor(ctx, c.source, rows); err != nil {
		return res, err
	}
	b.reportIngest(c, res)
	return res, nil
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

// reportIngest adds one format's figures: the new file and the re-ingest,
// each next to the COPY of the same rows.
func (b *bench) reportIngest(c ingestCase, res ingestResult) {
	base := fmt.Sprintf("COPY %s rows/s (%s)", perSecond(res.rows, res.copyTook), seconds(res.copyTook))
	copyRate := rate(res.rows, res.copyTook)
	n := count(int64(b.n)) + " " + c.unit
	b.addFigure(ingestFigure(c.name+" ingest, new file, "+n, base, res.rows, res.first, res.firstOut, copyRate, 0.5))
	if res.floorNew > 0 {
		b.addDetail(c.name+": the ledger floor, new file / re-ingest", fmt.Sprintf("%s rows/s (%.2fx of COPY) / %s rows/s (%.2fx)",
			perSecond(res.rows, res.floorNew), rate(res.rows, res.floorNew)/copyRate,
			perSecond(res.rows, res.floorAgain), rate(res.rows, res.floorAgain)/copyRate))
	}
	again := c.name + " re-ingest, 100% duplicates, " + n
	if res.firstOut {
		b.addFigure(figure{name: again, value: "not measured: the new file's ingest did not finish", baseline: base,
			target: "≥ 1.0x", met: "no"})
		return
	}
	b.addFigure(ingestFigure(again, base, res.rows, res.again, res.againOut, copyRate, 1.0))
	s := res.firstSum
	b.addDetail(c.name+": what the new file did", fmt.Sprintf("%s records, %s skipped, %s posted, %s notices, %s quarantined, exit %d",
		count(s.Records), count(s.Skipped), count(s.Posted), count(s.Notices), count(s.Quarantined), res.first.exit))
	b.addDetail(c.name+": peak RSS, new file / re-ingest", fmt.Sprintf("%.0f MiB / %.0f MiB", res.first.rssMiB(), res.again.rssMiB()))
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
