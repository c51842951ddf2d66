package main

// The fixed text of each report: how to run it and what it measures. The
// figures above it are rewritten on every run.

// bq is a Markdown code quote.
const bq = "`"

// howAndWhat is the fixed middle of docs/BENCHMARKS.md.
const howAndWhat = `
## How to run

` + "```" + `
make bench                    # 1,000,000 records per file, every figure 3 times; about 25 minutes on 2 cores today
make bench BENCH_FLAGS='-records 20000 -runs 1' BENCH_OUT=   # a quick run, no file written
make bench-check              # the independent check at 200,000 ACH entries (below); prints its table
make bench-scale              # 9,980,000 ACH entries against 998,000; writes docs/BENCHMARKS-scale.md
` + "```" + `

Flags of ` + bq + `go run ./cmd/bench` + bq + `: ` + bq + `-clearing PATH` + bq + ` (the binary to measure), ` + bq + `-out PATH` + bq + ` (this file; empty
writes none), ` + bq + `-records N` + bq + `, ` + bq + `-runs N` + bq + ` (default 3), ` + bq + `-database-url URL` + bq + ` (else
` + bq + `CLEARING_BENCH_DATABASE_URL` + bq + `, else a throw-away embedded cluster in a temporary folder, stopped and
removed at the end), ` + bq + `-work DIR` + bq + ` (where the generated files go; default a temporary folder),
` + bq + `-keep` + bq + ` (keep that folder), ` + bq + `-command-timeout D` + bq + ` (default 10m: a clearing command still running
then is stopped, the server sessions it left are ended, its figure is reported as a bound, "stopped
after 10m0s", and later runs of that format are not made), and ` + bq + `-check` + bq + ` or ` + bq + `-scale` + bq + ` for the other two
runs. A configured database must be a throw-away one: postings are append-only, so the run's
tenants (named ` + bq + `bench-<run>-<what>` + bq + `) stay in it. The program exits 0 whenever it measured everything,
whatever the ratios; timings are never pass/fail. It fails, with the command's stderr, when a
command exits with an unexpected code, an ingest summary does not account for every record, or the
floor did not write what it should have.

## What is measured

Every figure and its baseline run back to back on the same server in the same run, after a
` + bq + `CHECKPOINT` + bq + `, so that no step pays for the writes of the one before. Each figure is measured three
times (` + bq + `-runs` + bq + `), interleaved: run 1 of every format and of reconciliation, then run 2 of all, then
run 3, so that the machine's drift over the run reaches every figure alike. A ratio is taken
within each run, between the figure and the baseline measured next to it; the table gives the
median of the three with the lowest and highest in brackets, and the target is judged by the
median. Only the ratios are compared with the targets; absolute figures depend on the machine.

- **Inputs.** ` + bq + `clearing generate ach|iso8583|ipm|csv` + bq + ` with seed 1: N ACH entries (about 3% are
  prenotes, which are notices), N/10 ACH entries for the memory comparison, N ISO 8583 messages in
  RDW framing (responses and network messages are skipped by ingest; a few reversals have no
  original, so ingest exits 3), N IPM first presentments in 1014-byte blocks and EBCDIC, and N CSV
  rows in the ` + bq + `signed-amount` + bq + ` preset's shape.
- **Ingest, records/s.** Records handed to the ledger (read minus skipped) divided by the wall time
  of the whole ` + bq + `clearing ingest` + bq + ` process: start-up, reading and validating the file, posting with legs,
  audit, run bookkeeping. Each run of each format ingests under a new tenant. **Re-ingest** runs the
  same command on the same file under the same tenant, so every record is a duplicate and is
  audited as one. Targets: a new file at least 0.5x the COPY baseline, a re-ingest at least 0.75x
  of the same COPY, and either at least 0.85x of its ledger floor. Later runs find the earlier
  runs' postings in the ledger, as a ledger in use would.
- **COPY baseline, rows/s.** The same file read in process with the same reader (before the clock
  starts), one posting row per record with the file's own keys in file order, written by pgx
  ` + bq + `CopyFrom` + bq + ` into ` + bq + `CREATE TABLE ... (LIKE postings INCLUDING DEFAULTS INCLUDING IDENTITY INCLUDING
  INDEXES INCLUDING STORAGE)` + bq + `: the same columns, the primary key on ` + bq + `(tenant_id, posting_key)` + bq + ` with
  ` + bq + `COLLATE "C"` + bq + ` (checked), and the same secondary indexes, which ingest maintains too; no triggers,
  no check constraints (a notice's row has amount 0), no legs, no audit. A key that repeats within
  a file (ISO 8583 repeats) gets its record number appended. The table is created fresh for each
  COPY and dropped after it. The details also show COPY into a table with the primary key alone
  (run 1).
- **The ledger floor, rows/s.** What the writes that DESIGN.md §2 requires cost on their own, as
  the fastest bare SQL the bench knows, with the file's rows already on the server (a temporary
  table, loaded before the clock starts), into empty twins of ` + bq + `runs` + bq + `, ` + bq + `postings` + bq + `, ` + bq + `legs` + bq + ` and
  ` + bq + `audit_events` + bq + ` with their indexes. Both floors open a run row, and per chunk of 20,000 rows, in
  one transaction, write the chunk and advance the run's progress; then finish the run. **New
  file:** every row as a posting with its two legs in one statement, checked by the ledger's
  balance trigger, written two ways in run 1, ` + bq + `INSERT ... ON CONFLICT DO NOTHING RETURNING` + bq + ` and a plain
  ` + bq + `INSERT ... RETURNING` + bq + ` inside a savepoint (what DESIGN allows for a chunk of new keys); the faster
  is the floor, and later runs measure only that one. **Re-ingest:** one audit row per record naming
  the posting it met, found by a primary-key probe; nothing else is a write that a re-ingest must
  make. No parsing, staging, links, notices or quarantine. The bench checks afterwards that the
  twins hold a posting and two legs per row, an audit row per row and two finished runs. The
  floor's ratio to COPY (details) is the most any ingest built on those writes could reach on the
  same server; ingest's ratio to the floor is how close it comes.
- **Peak RSS.** The "Maximum resident set size" that ` + bq + `/usr/bin/time -v` + bq + ` reports for each
  ` + bq + `clearing` + bq + ` process (the kernel's own accounting; without GNU time, the same number from
  ` + bq + `wait4` + bq + `), the highest of the runs against the limit of 64 MiB. The server's memory is not
  included: clearing talks to it over a socket. Flat in file size: the ACH ingest of N entries
  against that of N/10, below 1.2x (` + bq + `make bench-scale` + bq + ` compares 9,980,000 with 998,000 for every
  command). After every timed figure, the last run's IPM ledger, for which no statement was
  imported, is reconciled over the span of its postings once: every posting is then
  missing_in_statement and the table lists the most breaks it ever lists, all of one class, which
  is the report's largest table; only its peak RSS is a figure.
- **Reconciliation, seconds.** A statement of the ACH source is written while the ACH file is
  read in run 1: one CSV line per posting with 1% of breaks planted by a seeded draw per posting
  (0.3% left out, 0.3% with a changed amount, 0.2% extra lines for money the ledger never saw,
  0.2% fee lines). In each run it is imported into that run's ACH tenant with
  ` + bq + `clearing statement import --source ach` + bq + ` (timed, no target). Then ` + bq + `clearing reconcile --source ach` + bq + `
  over the file's whole period (wall time of the process, which classifies, explains, stores
  discrepancies and proposes corrections; it exits 3 because of the breaks) is compared with a bare
  SQL full outer join of the same tenant's postings and statement lines of that source and period
  on ` + bq + `reference` + bq + `, classified by a ` + bq + `CASE` + bq + ` into matched, missing_in_ledger, missing_in_statement and
  amount_mismatch and counted per class; target at most 2.0x. The join runs once untimed before
  the command so that both find the tables equally cached. The classes clearing stored are checked
  against the planted breaks; a difference is printed as a warning.

## The independent check

` + bq + `make bench-check` + bq + ` (` + bq + `go run ./cmd/bench -check` + bq + `) measures, at 200,000 ACH entries and three times over:
` + bq + `clearing ingest` + bq + ` of a new file and its re-ingest as whole processes against a COPY of the very
posting rows the first ingest wrote (exported from ` + bq + `postings` + bq + ` as stored, ids included, and copied
into ` + bq + `CREATE TABLE ... (LIKE postings INCLUDING ALL)` + bq + `), as COPY's time over the command's; and
` + bq + `clearing reconcile` + bq + ` of a statement imported for that tenant against the bare join of the same
tables; with each command's peak RSS. It does not read the file for its baseline, so it checks
the bench's own baseline as well as the ledger.

## At scale

` + bq + `make bench-scale` + bq + ` writes docs/BENCHMARKS-scale.md, a file of its own: it took 33 minutes on this machine and
about 25 GiB of disk, so it is run apart from ` + bq + `make bench` + bq + ` and not in CI, and a file of its own lets
each run rewrite its results without touching the other's.
`

// scaleAbout is the fixed end of docs/BENCHMARKS-scale.md.
const scaleAbout = `
## How to run

` + "```" + `
make bench-scale                                    # 9,980,000 ACH entries against 998,000
go run ./cmd/bench -scale -records 20000 -out ''    # the same steps at 20,000 and 2,000, no file written
` + "```" + `

It is not part of CI. Before it starts it checks that the generated files' folder and, for a
throw-away cluster, the temporary folder have about 2.5 KB free per record (25 GiB at 9,980,000
plus 998,000), and fails otherwise; each size's files are removed as soon as its commands have
run, and the cluster at the end. A command may run for up to 3 hours (` + bq + `-command-timeout` + bq + `). The other
flags are those of ` + bq + `make bench` + bq + ` (docs/BENCHMARKS.md).

## What is measured

Once at N/10 and once at N ACH entries (seed 1), each under a tenant of its own, the small size
first, so that the large one runs on a ledger that already holds the small one's rows:
` + bq + `clearing ingest` + bq + ` of the new file, the same command again (every record a duplicate),
` + bq + `clearing statement import` + bq + ` of a statement with a line per posting and 1% of breaks planted (as in
` + bq + `make bench` + bq + `), and ` + bq + `clearing reconcile` + bq + ` of the whole period. Each is the wall time of the whole
process, with its peak RSS from ` + bq + `/usr/bin/time -v` + bq + ` (else ` + bq + `wait4` + bq + `). The cost per record is the wall
time over what the command handles (records, statement lines, or for reconciliation postings
plus lines); its ratio at N to that at N/10 must stay within 1.3x, and each command's peak RSS
under 64 MiB and within 1.2x of the small size's. Each figure is measured once: the spread of
` + bq + `make bench` + bq + ` (docs/BENCHMARKS.md) says how far one run can be trusted on the same machine.
`

// checkAbout is the fixed end of the independent check's report.
const checkAbout = `
## What is measured

See "The independent check" in docs/BENCHMARKS.md.
`
