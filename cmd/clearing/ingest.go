package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/clearing-dev/clearing/formats/ipm"
	"github.com/clearing-dev/clearing/formats/registry"
	"github.com/clearing-dev/clearing/ingest"
	"github.com/clearing-dev/clearing/internal/infile"
	"github.com/clearing-dev/clearing/internal/output"
)

type ingestOptions struct {
	format       string
	source       string
	dryRun       bool
	allowRedated bool
	chunkSize    int
	maxFileBytes int64
	metricsFile  string
	reader       registry.Options
}

func newIngestCommand(g *globalOptions) *cobra.Command {
	var o ingestOptions
	cmd := &cobra.Command{
		Use:   "ingest [flags] FILE...",
		Short: "Post the records of clearing files to the ledger, each exactly once",
		Long: `Ingest clearing files into the ledger. Each file is parsed and validated whole
first: a file with any bad record is rejected and nothing from it is posted;
it is recorded as a run with status rejected, whose errors 'clearing runs show
RUN' prints (a dry run records nothing). Then its records are applied in
chunks, one transaction each. A record whose key is already in the ledger is
not posted again: with the same content it is a duplicate, with other content
a conflict (exit 3). Every record that is not posted is written to the audit
trail; 'clearing lookup KEY' shows why.

An ACH file whose entries match posted entries on everything but the effective
entry date (a re-sent file with another date) is held whole as possible_resend
(exit 3), since each entry's key names its date and would post again; after
checking that it is not a re-send, ingest it again with --allow-redated.

An ingest that is interrupted (killed, crashed, lost its connection) is resumed
where its last committed chunk ended by running the same command again.

Formats: ach (NACHA ACH), ipm (Mastercard IPM clearing files, blocked or not,
EBCDIC or ASCII), iso8583 (ISO 8583:1987 host or switch message files) and csv
(with a column mapping). ACH and IPM files are detected; name the others with
--format.`,
		Example: `  clearing ingest /in/2026-11-29/*.ach
  clearing ingest --dry-run day1.ach
  clearing ingest /in/mastercard/T112-2026-11-29.ipm
  clearing ingest --format iso8583 --iso-framing rdw host-2026-11-29.log
  clearing ingest --format csv --map acme.toml settlement-2026-11-29.csv
  clearing ingest -o json day1.ach | jq '.[].posted'`,
		Args: cobra.MinimumNArgs(1),
		RunE: g.run(func(ctx context.Context, args []string) error {
			return runIngest(ctx, g, o, args)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&o.format, "format", "", "file format: "+strings.Join(ingest.Formats, ", ")+" (detected for ACH and IPM)")
	restrictFlag(f, "format", ingest.Formats)
	f.StringVar(&o.source, "source", "", "source name for settlement and reconciliation (default: the format, or the CSV mapping's source)")
	f.BoolVar(&o.dryRun, "dry-run", false, "parse, validate and compute what would be posted; write nothing")
	f.BoolVar(&o.allowRedated, "allow-redated", false, "post an ACH file whose entries match posted ones but for their effective date (it is not a re-send)")
	f.IntVar(&o.chunkSize, "chunk-size", ingest.DefaultChunkSize, "records applied per transaction")
	bindReaderFlags(f, &o.maxFileBytes, &o.reader)
	bindMetricsFlag(f, &o.metricsFile)
	return cmd
}

// bindReaderFlags declares the flags that say how to read an input file,
// which ingest and statement import share.
func bindReaderFlags(f *pflag.FlagSet, maxFileBytes *int64, ro *registry.Options) {
	f.Int64Var(maxFileBytes, "max-file-bytes", infile.DefaultMaxBytes, "refuse files larger than this")
	f.StringVar(&ro.ISOFraming, "iso-framing", "", "ISO 8583 framing: rdw, len2, ascii4, hex or raw (detected when unambiguous)")
	f.StringVar(&ro.ISOSpec, "iso-spec", "", "ISO 8583 spec: spec87ascii, spec87, or a path to a JSON spec")
	f.StringVar(&ro.IPMBlocking, "ipm-blocking", "", "IPM 1014 blocking: blocked or unblocked (detected)")
	f.StringVar(&ro.IPMEncoding, "ipm-encoding", "", "IPM code page: "+strings.Join(ipm.Encodings(), ", ")+" (EBCDIC or ASCII detected)")
	f.StringVar(&ro.CSVMap, "map", "", "CSV column mapping: a TOML file or preset:NAME")
	f.StringVar(&ro.FileID, "file-id", "", "CSV file id for line-based keys (default: the file's base name)")
	// Loosening a money check is for a source known to need it, named
	// here and recorded on the run; docs/formats lists each check.
	f.BoolVar(&ro.ACHLoosen.ForwardTracePrefix, "ach-loosen-trace-prefix", false, "ACH: accept forward entries whose trace number does not start with the ODFI routing (recorded on the run)")
	f.BoolVar(&ro.ACHLoosen.RDFICheckDigit, "ach-loosen-rdfi-check-digit", false, "ACH: accept entries whose RDFI check digit is wrong (recorded on the run)")
	f.BoolVar(&ro.BAI2Loosen.RecordCounts, "bai2-loosen-record-counts", false, "BAI2: accept 49/98/99 record counts that differ from the records read; totals are still checked (recorded on the run)")
	restrictReaderFlags(f)
}

func runIngest(ctx context.Context, g *globalOptions, o ingestOptions, files []string) (err error) {
	m := newCommandMetrics(o.metricsFile, "ingest")
	defer func() { err = m.finish(g, err) }()
	if o.chunkSize <= 0 || o.maxFileBytes <= 0 {
		return usagef("--chunk-size and --max-file-bytes must be positive")
	}
	d, err := g.open(ctx, false)
	if err != nil {
		return err
	}
	defer d.Close(ctx)
	opts := ingest.Options{
		Tenant: g.tenant, Format: o.format, Source: o.source, DryRun: o.dryRun, AllowRedated: o.allowRedated,
		ChunkSize: o.chunkSize, MaxFileBytes: o.maxFileBytes, Hasher: g.hasher(),
		Reader: o.reader, Log: g.log,
	}
	var sums []ingest.Summary
	rejected, attention, held := 0, 0, 0
	for _, file := range files {
		began := g.now()
		bar := g.newProgress(file)
		opts.Reading, opts.Progress = bar.hooks()
		s, err := ingest.File(ctx, d.pool, file, opts)
		bar.end()
		if err != nil && !errors.Is(err, ingest.ErrRejected) {
			return err // the database or the process failed: stop here
		}
		if err != nil {
			rejected++
			s.Error = err.Error()
			// The reasons, with their line numbers, as they are: a log
			// line would quote and escape them.
			g.reportRejected(file, err)
		}
		if s.NeedsAttention() {
			attention++
		}
		if s.AlreadyQuarantined > 0 {
			held++
		}
		g.logIngestSummary(s, began, err)
		m.ingested(s)
		sums = append(sums, s)
	}
	if err := writeIngestSummaries(g, sums); err != nil {
		return err
	}
	switch {
	case rejected > 0:
		return fmt.Errorf("%d of %d file(s) rejected; nothing from them was posted", rejected, len(files))
	case attention > 0 && held > 0:
		return fmt.Errorf("%w: %d file(s) have conflicts or quarantined records, %d of them records already quarantined by an earlier run and still open; see 'clearing runs show RUN' and 'clearing quarantine list'",
			errNeedsAttention, attention, held)
	case attention > 0:
		return fmt.Errorf("%w: %d file(s) have conflicts or quarantined records; see 'clearing runs show RUN'", errNeedsAttention, attention)
	}
	return nil
}

func writeIngestSummaries(g *globalOptions, sums []ingest.Summary) error {
	rows := output.Rows{Header: []string{"file", "format", "run", "status", "records", "posted",
		"duplicates", "conflicts", "quarantined", "already quarantined", "released", "notices", "skipped", "settled"}}
	for _, s := range sums {
		run := strconv.FormatInt(s.RunID, 10)
		if s.RunID == 0 {
			run = "-"
		} else if s.Resumed {
			run += " (resumed)"
		}
		rows.Add(s.File, s.Format, run, s.Status, itoa(s.Records), itoa(s.Posted), itoa(s.Duplicates),
			itoa(s.Conflicts), itoa(s.Quarantined), alreadyQuarantined(s), itoa(s.Released), itoa(s.Notices),
			itoa(s.Skipped), itoa(s.Settled))
	}
	if sums == nil {
		sums = []ingest.Summary{}
	}
	return output.Write(g.stdout, g.output, sums, rows)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// alreadyQuarantined is the summary's cell for records an earlier run
// holds: how many are still open, with the runs that first held them, and
// how many were dismissed since.
func alreadyQuarantined(s ingest.Summary) string {
	if s.AlreadyQuarantined == 0 && s.Dismissed == 0 {
		return "0"
	}
	var b strings.Builder
	b.WriteString(itoa(s.AlreadyQuarantined))
	if len(s.HeldBy) > 0 {
		ids := make([]string, len(s.HeldBy))
		for i, id := range s.HeldBy {
			ids[i] = itoa(id)
		}
		b.WriteString(" (run " + strings.Join(ids, ", ") + ")")
	}
	if s.Dismissed > 0 {
		b.WriteString(", " + itoa(s.Dismissed) + " dismissed")
	}
	return b.String()
}
