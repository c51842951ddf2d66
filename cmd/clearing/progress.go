package main

import (
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// fileProgress draws one file's ingest on stderr, phase by phase: the bytes
// read and validated, then the records applied, each with its rate and the
// time left. It draws nothing unless stderr is a terminal (cron's and CI's
// output stays clean); a nil *fileProgress is a valid one that draws
// nothing (docs/decisions/progress-on-a-terminal.md).
type fileProgress struct {
	f     *os.File
	file  string
	phase string
	bar   *progressbar.ProgressBar
	// shown is the count last passed to bar: the reading hook is called
	// once a record, far more often than a bar can be drawn.
	shown int64
}

// The phases of an ingest, as the bar names them.
const (
	phaseReading  = "reading and validating"
	phaseApplying = "applying"
)

// newProgress returns the progress of file, or nil when stderr is not a
// terminal or CI is set.
func (g *globalOptions) newProgress(file string) *fileProgress {
	f, ok := g.stderr.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) || os.Getenv("CI") != "" {
		return nil
	}
	p := &fileProgress{f: f, file: file}
	// Drawn before the first byte is read: a large file shows where it is
	// from the first second.
	if st, err := os.Stat(file); err == nil {
		p.show(phaseReading, 0, st.Size())
	}
	return p
}

// hooks returns the callbacks of ingest.Options (Reading, Progress); nil
// ones for a nil p.
func (p *fileProgress) hooks() (reading, applying func(done, total int64)) {
	if p == nil {
		return nil, nil
	}
	return func(done, total int64) { p.show(phaseReading, done, total) },
		func(done, total int64) { p.show(phaseApplying, done, total) }
}

// show moves the bar of phase to done of total, starting that phase's bar
// when it is new.
func (p *fileProgress) show(phase string, done, total int64) {
	if phase != p.phase {
		p.clear()
		p.phase, p.shown = phase, -1
		opts := []progressbar.Option{
			progressbar.OptionSetWriter(p.f),
			progressbar.OptionSetDescription(p.file + ": " + phase),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100 * time.Millisecond),
			progressbar.OptionSetRenderBlankState(true),
			progressbar.OptionClearOnFinish(),
		}
		if phase == phaseReading {
			// The rate in bytes a second; the records are not counted
			// until they are read.
			opts = append(opts, progressbar.OptionShowBytes(true))
		} else {
			opts = append(opts, progressbar.OptionShowIts(), progressbar.OptionSetItsString("records"))
		}
		p.bar = progressbar.NewOptions64(total, opts...)
	}
	// A step of under 1/1000 of the file is not worth a call into the
	// bar, which locks and looks at the clock each time.
	if done != total && p.shown >= 0 && done-p.shown < max(total/1000, 1) {
		return
	}
	p.shown = done
	p.bar.Set64(done) //nolint:errcheck // a terminal that cannot be drawn on is no reason to stop
}

// clear removes the bar from the terminal.
func (p *fileProgress) clear() {
	if p == nil || p.bar == nil {
		return
	}
	p.bar.Clear() //nolint:errcheck // as in show
	p.bar = nil
}

// end removes what p drew, before the summary is printed.
func (p *fileProgress) end() { p.clear() }
