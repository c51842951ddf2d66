package main

import (
	"context"
	"fmt"

	"github.com/clearing-dev/clearing/formats/registry"
)

// achResult is what the reconciliation needs from the ACH measurement.
type achResult struct {
	ingestResult
	tenant  string
	planted planted
}

// measureACH measures the ACH file and writes, while its records are read
// for the baseline, the statement that reconciliation compares them with.
func (b *bench) measureACH(ctx context.Context, in inputs) (achResult, error) {
	res := achResult{tenant: b.tenant("ach")}
	stmt, err := newStatementWriter(in.statement)
	if err != nil {
		return res, err
	}
	c := ingestCase{
		name: "ACH", unit: "entries", file: in.ach, tenant: res.tenant,
		flags: []string{"--format", registry.ACH}, accept: []int{0},
		reader: registry.Options{Format: registry.ACH}, source: registry.ACH,
		visit: stmt.add,
	}
	res.ingestResult, err = b.measureIngest(ctx, c)
	p, cerr := stmt.close()
	if err != nil {
		return res, err
	}
	if res.firstOut {
		return res, fmt.Errorf("the ACH ingest did not finish in %s; the memory and reconciliation figures need it", b.cmdTimeout)
	}
	res.planted = p
	return res, cerr
}

// measureMemory ingests the small ACH file under a tenant of its own and
// compares its peak memory with the full file's.
func (b *bench) measureMemory(ctx context.Context, in inputs, ach achResult) error {
	b.srv.checkpoint(ctx)
	small, err := b.clearing(ctx, []int{0}, "", "ingest", "-o", "json", "--tenant", b.tenant("ach-small"), in.achSmall)
	if err != nil {
		return err
	}
	if _, err := checkIngest(small, int64(b.small()), false); err != nil {
		return err
	}
	const limitMiB = 256
	full := ach.first
	b.addFigure(figure{
		name:  "peak RSS, ACH ingest of " + count(int64(b.n)) + " entries",
		value: fmt.Sprintf("%.0f MiB", full.rssMiB()), target: fmt.Sprintf("< %d MiB", limitMiB),
		met: yesNo(full.rssMiB() < limitMiB),
	})
	b.addFigure(figure{
		name:  "peak RSS, ACH ingest of " + count(int64(b.small())) + " entries",
		value: fmt.Sprintf("%.0f MiB", small.rssMiB()),
	})
	growth := full.rssMiB() / small.rssMiB()
	b.addFigure(figure{
		name:  "peak RSS growth, " + count(int64(b.n)) + " vs " + count(int64(b.small())) + " entries",
		value: fmt.Sprintf("%.2fx", growth), target: "< 1.5x", met: yesNo(growth < 1.5),
	})
	b.addDetail("ACH: ingest of "+count(int64(b.small()))+" entries", fmt.Sprintf("%s records/s (%s)",
		perSecond(int64(b.small()), small.wall), seconds(small.wall)))
	b.addDetail("peak RSS measured by", full.rssFrom)
	return nil
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

// measureIngestCase measures one format's ingest next to a COPY of its own
// rows.
func (b *bench) measureIngestCase(ctx context.Context, c ingestCase) error {
	_, err := b.measureIngest(ctx, c)
	return err
}
