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
	mode     string
	records  int
	runs     int
	commit   string
	machine  machineFacts
	server   serverFacts
	figures  []figure
	details  []detail
	warnings []string
}

func (b *bench) report() report {
	return report{
		when: b.started.UTC(), took: time.Since(b.started), mode: b.mode, records: b.n, runs: b.runs, commit: gitCommit(),
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
	var b strings.Builder
	r.write(&b)
	switch r.mode {
	case modeScale:
		b.WriteString(scaleAbout)
		return os.WriteFile(path, []byte(b.String()), 0o644)
	case modeCheck:
		b.WriteString(checkAbout)
		return os.WriteFile(path, []byte(b.String()), 0o644)
	}
	kept := "\n" + changesHeading + "\n\n" + firstChanges
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if i := bytes.Index(old, []byte(changesHeading)); i >= 0 {
		kept = "\n" + string(old[i:])
	}
	b.WriteString(howAndWhat)
	b.WriteString(kept)
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func (r report) write(b *strings.Builder) {
	title, target := "Benchmarks", "make bench"
	switch r.mode {
	case modeScale:
		title, target = "Benchmarks at scale", "make bench-scale"
	case modeCheck:
		title, target = "The independent check", "make bench-check"
	}
	fmt.Fprintf(b, "# %s\n\n", title)
	fmt.Fprintf(b, "Written by `%s` on %s (the run took %s), with %s records per generated file",
		target, r.when.Format("2006-01-02 15:04 MST"), r.took.Round(time.Second), count(int64(r.records)))
	if r.mode == modeScale {
		fmt.Fprintf(b, " (and %s for the comparison)", count(int64(r.records/10)))
	}
	if r.runs > 1 {
		fmt.Fprintf(b, "; every figure was measured %d times, interleaved, and is shown as the median with the lowest and highest run in brackets; a target is judged by the median of the runs' ratios", r.runs)
	}
	b.WriteString(".\n\n")
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

// firstChanges starts the hand-written section of a new report.
const firstChanges = `Each entry: the change, and the figures before and after it on the same machine.

- **Baseline.** The first measurement, before any tuning: the results above.
`
