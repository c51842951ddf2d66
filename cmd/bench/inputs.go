package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
)

// inputs are the generated files of one run.
type inputs struct {
	ach, achSmall, iso, ipm, csv string
	statement, mapping           string // written while the ACH file is read
}

// csvPreset is the mapping both the CSV file and its ingest use.
const csvPreset = "signed-amount"

// generate writes the input files with clearing's own generators, as a user
// preparing a load test would. The same seed always gives the same bytes.
func (b *bench) generate(ctx context.Context) (inputs, error) {
	in := inputs{
		ach: b.path("entries.ach"), achSmall: b.path("entries-small.ach"),
		iso: b.path("messages.rdw"), ipm: b.path("clearing.ipm"), csv: b.path("rows.csv"),
		statement: b.path("statement.csv"), mapping: b.path("statement.toml"),
	}
	n, small := strconv.Itoa(b.n), strconv.Itoa(b.small())
	steps := []struct {
		name string
		path string
		args []string
	}{
		{"ACH file, " + count(int64(b.n)) + " entries", in.ach,
			[]string{"generate", "ach", "--entries", n, "--seed", "1", "--out", in.ach}},
		{"ACH file, " + count(int64(b.small())) + " entries", in.achSmall,
			[]string{"generate", "ach", "--entries", small, "--seed", "1", "--out", in.achSmall}},
		{"ISO 8583 file, " + count(int64(b.n)) + " messages", in.iso,
			[]string{"generate", "iso8583", "--messages", n, "--framing", "rdw", "--seed", "1", "--out", in.iso}},
		{"IPM file, " + count(int64(b.n)) + " first presentments, 1014-blocked EBCDIC", in.ipm,
			[]string{"generate", "ipm", "--presentments", n, "--blocked", "--seed", "1", "--out", in.ipm}},
		{"CSV file, " + count(int64(b.n)) + " rows", in.csv,
			[]string{"generate", "csv", "--preset", csvPreset, "--rows", n, "--seed", "1", "--out", in.csv}},
	}
	for _, s := range steps {
		r, err := b.clearing(ctx, []int{0}, "", s.args...)
		if err != nil {
			return in, err
		}
		st, err := os.Stat(s.path)
		if err != nil {
			return in, err
		}
		b.addDetail("generate "+s.name, fmt.Sprintf("%s, %.1f MiB, peak RSS %.0f MiB", seconds(r.wall), float64(st.Size())/(1<<20), r.rssMiB()))
	}
	return in, os.WriteFile(in.mapping, []byte(statementMapping), 0o644)
}
