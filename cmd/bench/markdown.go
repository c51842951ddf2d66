package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"time"
)

// changesHeading starts the hand-written part of the report: each tuning
// change and what it bought. Everything from it to the end of the file is
// kept as it is when the results above it are rewritten.
const changesHeading = "## Changes and what they bought"

// report is everything the markdown file shows about one run.
type report struct {
	when     time.Time
	took     time.Duration
	records  int
	commit   string
	machine  machineFacts
	server   serverFacts
	figures  []figure
	details  []detail
	warnings []string
}

func (b *bench) report() report {
	return report{
		when: b.started.UTC(), took: time.Since(b.started), records: b.n, commit: gitCommit(),
		machine: b.machine, server: b.server, figures: b.figures, details: b.details, warnings: b.warnings,
	}
}

// gitCommit names the checked-out commit, or "" outside a git work tree. It
// only reads.
func gitCommit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// writeMarkdown writes r to path, keeping the hand-written section of the
// file that is there.
func writeMarkdown(path string, r report) error {
	kept := "\n" + changesHeading + "\n\n" + firstChanges
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if i := bytes.Index(old, []byte(changesHeading)); i >= 0 {
		kept = "\n" + string(old[i:])
	}
	var b strings.Builder
	r.write(&b)
	b.WriteString(howAndWhat)
	b.WriteString(kept)
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func (r report) write(b *strings.Builder) {
	b.WriteString("# Benchmarks\n\n")
	fmt.Fprintf(b, "Written by `make bench` on %s (the run took %s), with %s records per generated file.\n\n",
		r.when.Format("2006-01-02 15:04 MST"), r.took.Round(time.Second), count(int64(r.records)))
	b.WriteString("| run | |\n|---|---|\n")
	fmt.Fprintf(b, "| machine | %d cores (`runtime.NumCPU`), %s, %.1f GiB memory, %s |\n",
		r.machine.cores, r.machine.cpu, r.machine.memoryGiB, r.machine.os)
	fmt.Fprintf(b, "| PostgreSQL | %s |\n", r.server.version)
	fmt.Fprintf(b, "| server settings | %s |\n", r.server.settings)
	fmt.Fprintf(b, "| Go | %s |\n", r.machine.goVersion)
	if r.commit != "" {
		fmt.Fprintf(b, "| commit | %s |\n", r.commit)
	}
	b.WriteString("\n## Results\n\n")
	b.WriteString("| figure | value | baseline | ratio | target | met |\n|---|---|---|---|---|---|\n")
	for _, f := range r.figures {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", f.name, f.value, dash(f.baseline), dash(f.ratio), dash(f.target), dash(f.met))
	}
	if len(r.warnings) > 0 {
		b.WriteString("\n**Warnings.**\n\n")
		for _, w := range r.warnings {
			fmt.Fprintf(b, "- %s\n", w)
		}
	}
	b.WriteString("\n### Details\n\n| measurement | value |\n|---|---|\n")
	for _, d := range r.details {
		fmt.Fprintf(b, "| %s | %s |\n", d.name, d.value)
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// howAndWhat is the fixed middle of the report.
const howAndWhat = `
## How to run

` + "```" + `
make bench        # 1,000,000 records per file; about 7 minutes on 2 cores
go run ./cmd/bench -clearing bin/clearing -records 100000 -out ''   # a quick run, no file written
` + "```" + `

Flags: ` + "`-clearing PATH`" + ` (the binary to measure), ` + "`-out PATH`" + ` (this file; empty writes none),
` + "`-records N`" + `, ` + "`-database-url URL`" + ` (else ` + "`CLEARING_BENCH_DATABASE_URL`" + `, else a throw-away
embedded cluster in a temporary folder, stopped and removed at the end), ` + "`-work DIR`" + ` (where the
generated files go; default a temporary folder), ` + "`-keep`" + ` (keep that folder) and
` + "`-command-timeout D`" + ` (default 10m: a clearing command still running then is stopped, the server
sessions it left are ended, and its figure is reported as a bound, "stopped after 10m0s"). A configured
database must be a throw-away one: postings are append-only, so the run's tenants (named
` + "`bench-<run>-<what>`" + `) stay in it. The program exits 0 whenever it measured everything, whatever
the ratios; timings are never pass/fail. It fails, with the command's stderr, when a command exits
with an unexpected code or an ingest summary does not account for every record.

## What is measured

Every figure and its baseline run back to back on the same server in the same run, after a
` + "`CHECKPOINT`" + `, so that no step pays for the writes of the one before. Only the ratios are compared
with the targets; absolute figures depend on the machine.

- **Inputs.** ` + "`clearing generate ach|iso8583|csv`" + ` with seed 1: N ACH entries (about 3% are
  prenotes, which are notices), N/10 ACH entries for the memory comparison, N ISO 8583 messages in
  RDW framing (responses and network messages are skipped by ingest; a few reversals have no
  original, so ingest exits 3), and N CSV rows in the ` + "`signed-amount`" + ` preset's shape.
- **Ingest, records/s.** Records handed to the ledger (read minus skipped) divided by the wall time
  of the whole ` + "`clearing ingest`" + ` process: start-up, parsing, staging, posting with legs, audit,
  run bookkeeping. Each format gets a new tenant. **Re-ingest** runs the same command on the same
  file under the same tenant, so every record is a duplicate and is audited as one.
- **COPY baseline, rows/s.** The same file read in process with the same reader (before the clock
  starts), one posting row per record with the file's own keys in file order, written by pgx
  ` + "`CopyFrom`" + ` into ` + "`CREATE TABLE ... (LIKE postings INCLUDING DEFAULTS INCLUDING IDENTITY INCLUDING\nINDEXES INCLUDING STORAGE)`" + `: the same columns, the primary key on ` + "`(tenant_id, posting_key)`" + ` with
  ` + "`COLLATE \"C\"`" + ` (checked), and the same secondary indexes, which ingest maintains too; no triggers,
  no legs, no audit. A key that repeats within a file (ISO 8583 repeats) gets its record number
  appended. The table is created fresh for each COPY and dropped after it. The re-ingest target
  is held to the same COPY figure. The details also show COPY into a table with the primary key
  alone.
- **The ledger floor, rows/s (details).** What the writes that every ingest must make cost on
  their own, as bare SQL with the file's rows already on the server (a temporary table, loaded
  before the clock starts), into empty twins of ` + "`postings`, `legs` and `audit_events`" + ` with their
  indexes: per chunk of 20,000 rows, in one transaction, ` + "`INSERT ... ON CONFLICT DO NOTHING RETURNING`" + `
  into postings with the two legs of each new posting in the same statement, checked by the
  ledger's balance trigger; then, for the re-ingest floor, the same statement again (every key
  taken) and one audit row per record naming the posting it met. No parsing, staging, links,
  notices or run bookkeeping. Its ratio to COPY is the most that any ingest built on those writes
  could reach on the same server, and so says whether a target can be met at all.
- **Peak RSS.** The "Maximum resident set size" that ` + "`/usr/bin/time -v`" + ` reports for the
  ` + "`clearing ingest`" + ` process (the kernel's own accounting; without GNU time, the same number
  from ` + "`wait4`" + `). The server's memory is not included: clearing talks to it over a socket.
- **Reconciliation, seconds.** A statement of the ACH source is written while the ACH file is
  read: one CSV line per posting with 1% of breaks planted by a seeded draw per posting (0.3% left
  out, 0.3% with a changed amount, 0.2% extra lines for money the ledger never saw, 0.2% fee
  lines). It is imported with ` + "`clearing statement import --source ach`" + ` (timed, no target). Then
  ` + "`clearing reconcile --source ach`" + ` over the file's whole period (wall time of the process,
  which classifies, explains, stores discrepancies and proposes corrections; it exits 3 because of
  the breaks) is compared with a bare SQL full outer join of the same tenant's postings and
  statement lines of that source and period on ` + "`reference`" + `, classified by a ` + "`CASE`" + ` into matched,
  missing_in_ledger, missing_in_statement and amount_mismatch and counted per class. The join runs
  once untimed before the command so that both find the tables equally cached. The classes
  clearing stored are checked against the planted breaks; a difference is printed as a warning.
`

// firstChanges starts the hand-written section of a new report.
const firstChanges = `Each entry: the change, and the figures before and after it on the same machine.

- **Baseline.** The first measurement, before any tuning: the results above.
`
