package main

import (
	"context"
	"fmt"

	"github.com/clearing-dev/clearing/formats/registry"
)

// flatTarget is the most the peak RSS of an ingest may grow from a file
// to one ten times its size: memory is to be flat in the file's size, and
// this leaves room for the runtime's own noise and nothing more.
const flatTarget = 1.2

// measureRuns measures every format's ingest, and reconciliation, b.runs
// times over. The runs are interleaved (run 1 of everything, then run 2 of
// everything...) so that the machine's drift over the whole run reaches
// every figure alike, and within a run each figure is measured back to
// back with its baseline.
func (b *bench) measureRuns(ctx context.Context, in inputs) error {
	cases := []*caseResult{{c: b.achCase(in)}, {c: b.csvCase(in)}, {c: b.ipmCase(in)}, {c: b.isoCase(in)}}
	var (
		p     planted
		small ran
		recs  []reconcileRun
	)
	for run := 1; run <= b.runs; run++ {
		fmt.Fprintf(b.out, "run %d of %d\n", run, b.runs)
		for _, cr := range cases {
			if cr.stopped {
				continue
			}
			c := cr.c
			ach := c.name == achName
			var stmt *statementWriter
			if ach && run == 1 {
				// The statement that reconciliation compares the ledger with
				// is written while the ACH file is read for the baseline.
				var err error
				if stmt, err = newStatementWriter(in.statement); err != nil {
					return err
				}
				c.visit = stmt.add
			}
			err := b.measureIngestRun(ctx, c, run, cr)
			if stmt != nil {
				var cerr error
				if p, cerr = stmt.close(); err == nil {
					err = cerr
				}
			}
			if err != nil {
				return err
			}
			if !ach {
				continue
			}
			if cr.stopped {
				return fmt.Errorf("the ACH ingest did not finish in %s; the memory and reconciliation figures need it", b.cmdTimeout)
			}
			if run == 1 {
				if small, err = b.ingestSmall(ctx, in); err != nil {
					return err
				}
			}
			last := cr.runs[len(cr.runs)-1]
			rr, err := b.measureReconcile(ctx, in, last.tenant, last.firstSum.Posted, p, run)
			if err != nil {
				return err
			}
			recs = append(recs, rr)
		}
	}
	oneSided, err := b.reconcileOneSided(ctx, cases[2])
	if err != nil {
		return err
	}
	for _, cr := range cases {
		b.reportIngest(cr)
	}
	b.reportReconcile(recs, p)
	b.reportOneSided(oneSided)
	b.reportMemory(cases[0], small)
	return nil
}

// ingestSmall ingests the ACH file of a tenth of the size under a tenant of
// its own, for its peak memory.
func (b *bench) ingestSmall(ctx context.Context, in inputs) (ran, error) {
	b.srv.checkpoint(ctx)
	small, err := b.clearing(ctx, []int{0}, "", "ingest", "-o", "json", "--tenant", b.tenant("ach-small"), in.achSmall)
	if err != nil {
		return small, err
	}
	_, err = checkIngest(small, int64(b.small()), false)
	return small, err
}

// reportMemory compares the peak memory of the full ACH file's ingest
// (the highest of its runs) with the small file's.
func (b *bench) reportMemory(ach *caseResult, small ran) {
	full := seriesOf(ach.runs).rssFirst.hi
	growth := full / small.rssMiB()
	b.addFigure(figure{
		name:   "peak RSS growth, ACH ingest of " + count(int64(b.n)) + " vs " + count(int64(b.small())) + " entries",
		value:  fmt.Sprintf("%.2fx (%.0f MiB vs %.0f MiB)", growth, full, small.rssMiB()),
		target: "< " + targetText(flatTarget), met: yesNo(growth < flatTarget),
	})
	b.addDetail("ACH: ingest of "+count(int64(b.small()))+" entries", fmt.Sprintf("%s records/s (%s)",
		perSecond(int64(b.small()), small.wall), seconds(small.wall)))
	b.addDetail("peak RSS measured by", small.rssFrom)
}

// achName names the ACH case, which reconciliation and memory build on.
const achName = "ACH"

// achCase is the ACH file's ingest.
func (b *bench) achCase(in inputs) ingestCase {
	return ingestCase{
		name: achName, unit: "entries", file: in.ach, tenant: b.tenant("ach"),
		flags: []string{"--format", registry.ACH}, accept: []int{0},
		reader: registry.Options{Format: registry.ACH}, source: registry.ACH,
	}
}

// isoCase is the ISO 8583 file's ingest. Generated files hold reversals
// whose original is not in the file, which ingest quarantines and reports
// with exit 3.
func (b *bench) isoCase(in inputs) ingestCase {
	return ingestCase{
		name: "ISO 8583", unit: "messages", file: in.iso, tenant: b.tenant("iso8583"),
		flags: []string{"--format", registry.ISO8583, "--iso-framing", "rdw"}, accept: []int{0, 3},
		reader: registry.Options{Format: registry.ISO8583, ISOFraming: "rdw"}, source: registry.ISO8583,
	}
}

// ipmCase is the Mastercard IPM file's ingest: first presentments, in
// 1014-byte blocks and EBCDIC, as issuers receive them.
func (b *bench) ipmCase(in inputs) ingestCase {
	return ingestCase{
		name: "IPM", unit: "presentments", file: in.ipm, tenant: b.tenant("ipm"),
		flags: []string{"--format", registry.IPM}, accept: []int{0},
		reader: registry.Options{Format: registry.IPM}, source: registry.IPM,
	}
}

// csvCase is the CSV file's ingest.
func (b *bench) csvCase(in inputs) ingestCase {
	return ingestCase{
		name: "CSV", unit: "rows", file: in.csv, tenant: b.tenant("csv"),
		flags: []string{"--format", registry.CSV, "--map", "preset:" + csvPreset}, accept: []int{0},
		reader: registry.Options{Format: registry.CSV, CSVMap: "preset:" + csvPreset}, source: csvPreset,
	}
}
