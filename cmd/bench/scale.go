package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/clearing-dev/clearing/formats/registry"
)

// The scale run measures the four commands that a ledger of ten million
// records lives by, at -records (default ach.MaxEntries, 9,980,000: the most
// one ACH file holds; docs/decisions/scale-run-size.md) and at a tenth of
// it, in one run on one server: ACH ingest of a new file, its re-ingest,
// the import of a statement with a line per posting, and the
// reconciliation of the two. Each is timed as a whole
// process with its peak RSS from the OS's accounting. The figure is the
// cost per record at the large size against the small one: nothing
// quadratic, nothing that grows with the ledger. The large size runs
// second, on a ledger that holds the small one's rows already, so a flat
// cost is not flattered by an empty ledger.
const (
	scaleCostTarget = 1.3 // per-record cost, large size over small
	// scaleBytesPerRecord is what one record of the large size needs on
	// disk at the peak of the run, generously: the ACH file and the
	// statement (about 140 bytes), the posting with its indexes, two legs,
	// a duplicate's audit row and a statement line (the database held
	// 1.9 KB per entry after a scale run at 50,000), the ingest's stage
	// while it runs, and WAL.
	scaleBytesPerRecord = 2500
)

// scaleStep names one command of the scale run.
type scaleStep int

const (
	stepIngest scaleStep = iota
	stepReingest
	stepImport
	stepReconcile
	scaleSteps
)

var scaleStepNames = [scaleSteps]struct{ name, unit string }{
	stepIngest:    {"ACH ingest, new file", "records"},
	stepReingest:  {"ACH re-ingest, 100% duplicates", "records"},
	stepImport:    {"statement import", "lines"},
	stepReconcile: {"reconciliation", "items"},
}

// scaleSize is what the scale run measured at one size.
type scaleSize struct {
	entries int
	steps   [scaleSteps]ran
	items   [scaleSteps]int64 // what each step's rate counts
}

// perRecord is step's wall time per item.
func (s scaleSize) perRecord(step scaleStep) time.Duration {
	return s.steps[step].wall / time.Duration(max(s.items[step], 1))
}

// measureScale measures the small size, then the large one.
func (b *bench) measureScale(ctx context.Context) error {
	fmt.Fprintf(b.out, "scale run: %s entries, then %s\n", count(int64(b.small())), count(int64(b.n)))
	var sizes []scaleSize
	for _, n := range []int{b.small(), b.n} {
		s, err := b.scaleRun(ctx, n)
		if err != nil {
			return err
		}
		sizes = append(sizes, s)
	}
	b.reportScale(sizes[0], sizes[1])
	var dbBytes int64
	if err := b.srv.pool.QueryRow(ctx, `SELECT pg_database_size(current_database())`).Scan(&dbBytes); err == nil {
		b.addDetail("database size at the end", fmt.Sprintf("%.0f MiB", float64(dbBytes)/(1<<20)))
	}
	return nil
}

// scaleRun generates an ACH file of n entries and its statement, runs the
// four commands on them under a tenant of its own, and removes the files.
func (b *bench) scaleRun(ctx context.Context, n int) (scaleSize, error) {
	s := scaleSize{entries: n}
	tag := strconv.Itoa(n)
	in := inputs{ach: b.path("scale-" + tag + ".ach"), statement: b.path("scale-" + tag + "-statement.csv"), mapping: b.path("statement.toml")}
	defer os.Remove(in.ach)
	defer os.Remove(in.statement)
	p, err := b.generateACH(ctx, n, in)
	if err != nil {
		return s, err
	}
	tenant := b.tenant("scale-" + tag)
	args := []string{"ingest", "-o", "json", "--tenant", tenant, "--format", registry.ACH, in.ach}
	b.srv.checkpoint(ctx)
	if s.steps[stepIngest], err = b.clearing(ctx, []int{0}, "", args...); err != nil {
		return s, err
	}
	sum, err := checkIngest(s.steps[stepIngest], int64(n), false)
	if err != nil {
		return s, err
	}
	b.srv.checkpoint(ctx)
	if s.steps[stepReingest], err = b.clearing(ctx, []int{0}, "", args...); err != nil {
		return s, err
	}
	if _, err := checkIngest(s.steps[stepReingest], int64(n), true); err != nil {
		return s, err
	}
	b.srv.checkpoint(ctx)
	s.steps[stepImport], err = b.clearing(ctx, []int{0}, "", "statement", "import", "--tenant", tenant, "--source", "ach",
		"--format", "csv", "--map", in.mapping, in.statement)
	if err != nil {
		return s, err
	}
	b.srv.checkpoint(ctx)
	s.steps[stepReconcile], err = b.clearing(ctx, []int{3}, b.path("reconcile.txt"), "reconcile", "--tenant", tenant,
		"--source", "ach", "--from", p.from.Format(time.DateOnly), "--to", p.to.Format(time.DateOnly))
	if err != nil {
		return s, err
	}
	os.Remove(b.path("reconcile.txt"))
	if _, err := b.checkClasses(ctx, tenant, p, 1); err != nil {
		return s, err
	}
	s.items = [scaleSteps]int64{int64(n), int64(n), p.lines, sum.Posted + p.lines}
	for step, r := range s.steps {
		fmt.Fprintf(b.out, "  %s entries, %s: %s, peak RSS %.0f MiB\n", count(int64(n)), scaleStepNames[step].name, seconds(r.wall), r.rssMiB())
	}
	return s, nil
}

// reportScale adds, for each command, the large size's time, rate and peak
// RSS next to the small size's, and their cost per record; and each
// command's peak RSS against the limit and against the small size's.
func (b *bench) reportScale(small, large scaleSize) {
	for step := range scaleSteps {
		st := scaleStepNames[step]
		at := func(s scaleSize) string {
			r := s.steps[step]
			return fmt.Sprintf("%s %s: %s, %s %s/s, %.0f MiB", count(int64(s.entries)), "entries", seconds(r.wall),
				perSecond(s.items[step], r.wall), st.unit, r.rssMiB())
		}
		cost := float64(large.perRecord(step)) / float64(small.perRecord(step))
		f := ratioFigure(st.name+", cost per "+singular(st.unit), at(large), at(small), cost, scaleCostTarget, false, "")
		b.addFigure(f)
	}
	for step := range scaleSteps {
		lr, sr := large.steps[step].rssMiB(), small.steps[step].rssMiB()
		growth := lr / sr
		b.addFigure(figure{
			name:     "peak RSS, " + scaleStepNames[step].name,
			value:    fmt.Sprintf("%.0f MiB at %s entries (%.2fx)", lr, count(int64(large.entries)), growth),
			baseline: fmt.Sprintf("%.0f MiB at %s", sr, count(int64(small.entries))),
			target:   fmt.Sprintf("< %d MiB, < %s", rssLimitMiB, targetText(flatTarget)),
			met:      yesNo(lr < rssLimitMiB && growth < flatTarget),
		})
	}
	for step := range scaleSteps {
		b.addDetail(scaleStepNames[step].name+": what the rate counts", fmt.Sprintf("%s %s at %s entries, %s at %s",
			count(large.items[step]), scaleStepNames[step].unit, count(int64(large.entries)), count(small.items[step]), count(int64(small.entries))))
	}
	b.addDetail("peak RSS measured by", large.steps[stepIngest].rssFrom)
}

func singular(unit string) string {
	switch unit {
	case "records":
		return "record"
	case "lines":
		return "line"
	}
	return "item"
}

// checkDisk fails when the folders that the scale run fills lack the room
// it needs: the generated files in work, and a throw-away cluster in the
// temporary folder (a configured server's disk cannot be seen from here).
func checkDisk(records int, work, databaseURL string) error {
	need := uint64(records+records/10) * scaleBytesPerRecord
	dirs := []string{work}
	if databaseURL == "" {
		dirs = append(dirs, os.TempDir())
	}
	var st syscall.Statfs_t
	for _, d := range dirs {
		if err := syscall.Statfs(d, &st); err != nil {
			return fmt.Errorf("free space of %s: %w", d, err)
		}
		if free := st.Bavail * uint64(st.Bsize); free < need {
			return fmt.Errorf("the scale run at %s records needs about %.0f GiB free, and %s has %.1f GiB (-records sets the size)",
				count(int64(records)), float64(need)/(1<<30), d, float64(free)/(1<<30))
		}
	}
	return nil
}
