package main

import (
	"fmt"
	"slices"
)

// spread is what several runs of one measurement gave: the median, which a
// target is judged by, and the lowest and highest value, which say how far
// one run can be trusted on this machine.
type spread struct {
	med, lo, hi float64
	n           int // how many runs; 0 means nothing was measured
}

// spreadOf summarises xs. The median of an even count is the mean of the
// middle two.
func spreadOf(xs []float64) spread {
	if len(xs) == 0 {
		return spread{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return spread{med: m, lo: s[0], hi: s[len(s)-1], n: len(s)}
}

// text writes the median with format f and unit, then the range in
// brackets, without the unit: "26,238 records/s (24,883–27,594)". A single
// run has no range to show.
func (s spread) text(f func(float64) string, unit string) string {
	out := f(s.med) + unit
	if s.n >= 2 {
		out += " (" + f(s.lo) + "–" + f(s.hi) + ")"
	}
	return out
}

// rateText writes a rate spread: "36,122 records/s (35,010–37,400)".
func (s spread) rateText(unit string) string {
	return s.text(func(v float64) string { return count(int64(v)) }, " "+unit)
}

// ratioText writes a ratio spread: "0.33x (0.31–0.35)".
func (s spread) ratioText() string {
	return s.text(func(v float64) string { return fmt.Sprintf("%.2f", v) }, "x")
}

// secondsText writes a spread of durations: "6.29 s (6.10–6.80)".
func (s spread) secondsText() string {
	return s.text(func(v float64) string { return fmt.Sprintf("%.2f", v) }, " s")
}

// mibText writes a spread of memory sizes: "30 MiB (29–31)".
func (s spread) mibText() string {
	return s.text(func(v float64) string { return fmt.Sprintf("%.0f", v) }, " MiB")
}

// pairs collects, for every run where both were measured, f(a, b): the
// ratio of a figure to its baseline is taken run by run, since the two ran
// back to back and drift in between is what the pairing cancels.
func pairs[T any](runs []T, f func(T) (float64, bool)) []float64 {
	var out []float64
	for _, r := range runs {
		if v, ok := f(r); ok {
			out = append(out, v)
		}
	}
	return out
}

// ratioSpreadFigure builds a figure from spreads: the value and baseline
// as written, the ratio judged by its median against target. bound is as
// for ratioFigure.
func ratioSpreadFigure(name, value, baseline string, ratio spread, target float64, atLeast bool, bound string) figure {
	f := ratioFigure(name, value, baseline, ratio.med, target, atLeast, bound)
	if bound == "" {
		f.ratio = ratio.ratioText()
	}
	return f
}
