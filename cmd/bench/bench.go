package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// bench holds one run's settings and what it has measured so far.
type bench struct {
	bin, work string
	srv       *server
	n         int // records per generated file
	runs      int // times each figure is measured
	mode      string
	out       io.Writer
	runTag    string // makes this run's tenants new, even on a reused server
	started   time.Time
	// cmdTimeout stops a clearing command that runs longer; its figure then
	// says so.
	cmdTimeout time.Duration

	machine  machineFacts
	server   serverFacts
	figures  []figure
	details  []detail
	warnings []string
}

// figure is one row of the results table: a measurement, its baseline, and
// the target their ratio is held to.
type figure struct {
	name, value, baseline string
	ratio                 string // "0.42x", "< 0.05x" for a bound, or ""
	target                string
	met                   string // "yes", "no", or "" without a target
}

// detail is a measurement reported for context, with no target.
type detail struct{ name, value string }

func newBench(bin, work string, srv *server, n, runs int, timeout time.Duration, out io.Writer) *bench {
	now := time.Now()
	return &bench{bin: bin, work: work, srv: srv, n: n, runs: runs, out: out, started: now, cmdTimeout: timeout,
		runTag: strconv.FormatInt(now.Unix(), 36)}
}

// tenant names this run's tenant for one measurement.
func (b *bench) tenant(name string) string { return "bench-" + b.runTag + "-" + name }

func (b *bench) path(name string) string { return filepath.Join(b.work, name) }

// small is the size of the second ACH file, whose peak memory is compared
// with the full one's.
func (b *bench) small() int { return b.n / 10 }

func (b *bench) addFigure(f figure) {
	b.figures = append(b.figures, f)
	ratio := ""
	if f.ratio != "" {
		ratio = "  ratio " + f.ratio
	}
	target := ""
	if f.target != "" {
		target = fmt.Sprintf("  target %s: %s", f.target, f.met)
	}
	base := ""
	if f.baseline != "" {
		base = "  vs " + f.baseline
	}
	fmt.Fprintf(b.out, "%-52s %s%s%s%s\n", f.name, f.value, base, ratio, target)
}

func (b *bench) addDetail(name, value string) {
	b.details = append(b.details, detail{name, value})
	fmt.Fprintf(b.out, "  %-50s %s\n", name, value)
}

func (b *bench) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	b.warnings = append(b.warnings, msg)
	fmt.Fprintf(b.out, "WARNING: %s\n", msg)
}

// ratioFigure builds a figure whose ratio must be at least (atLeast) or at
// most (!atLeast) target. bound is "" for a measured ratio, or "<" or ">"
// when the measurement was stopped and the ratio is only a bound.
func ratioFigure(name, value, baseline string, ratio, target float64, atLeast bool, bound string) figure {
	f := figure{name: name, value: value, baseline: baseline, ratio: fmt.Sprintf("%.2fx", ratio)}
	if bound != "" {
		f.ratio = bound + " " + f.ratio
	}
	met := ratio <= target && bound != ">"
	f.target = "≤ " + targetText(target)
	if atLeast {
		met = ratio >= target && bound != "<"
		f.target = "≥ " + targetText(target)
	}
	f.met = yesNo(met)
	return f
}

// targetText writes a target ratio with as many decimals as it has, at
// least one: "0.5x", "0.75x", "2.0x".
func targetText(t float64) string {
	s := strconv.FormatFloat(t, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s + "x"
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

// measureAll measures what the mode asks for: by default it generates the
// inputs and measures every figure b.runs times.
func (b *bench) measureAll(ctx context.Context) error {
	var err error
	b.machine = readMachine()
	if b.server, err = b.srv.facts(ctx); err != nil {
		return err
	}
	fmt.Fprintf(b.out, "clearing bench: %s records, %d cores (%s), PostgreSQL %s\n",
		count(int64(b.n)), b.machine.cores, b.machine.cpu, b.server.version)
	if _, err := b.clearing(ctx, []int{0}, "", "migrate"); err != nil {
		return err
	}
	switch b.mode {
	case modeScale:
		return b.measureScale(ctx)
	case modeCheck:
		return b.measureCheck(ctx)
	}
	in, err := b.generate(ctx)
	if err != nil {
		return err
	}
	return b.measureRuns(ctx, in)
}

// count writes n with thousands separators.
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// perSecond writes n per d with thousands separators.
func perSecond(n int64, d time.Duration) string {
	return count(int64(float64(n) / d.Seconds()))
}

func rate(n int64, d time.Duration) float64 { return float64(n) / d.Seconds() }

func seconds(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }
