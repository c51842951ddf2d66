// Package statementtest holds the test harness that the bank-statement
// readers' tests (formats/camt and formats/mt940) share: the data-driven
// golden cases of testdata/cases.
package statementtest

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the want sections of testdata/cases")

// Golden runs the data-driven cases of testdata/cases, in the style of
// formats/csv: comment lines, then "-- input --" and "-- want --". render
// reads the input and describes what the reader returned; it must equal
// the want section. A comment line "#! crlf" turns the input's line ends
// into CRLF. go test -rewrite regenerates the want sections.
func Golden(t *testing.T, render func(t *testing.T, input string) string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "cases", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			comments, input, want := SplitCase(string(data))
			in := input
			if strings.Contains(comments, "#! crlf") {
				in = strings.ReplaceAll(in, "\n", "\r\n")
			}
			got := render(t, in)
			if *rewrite {
				out := comments + "-- input --\n" + input + "-- want --\n" + got
				if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != want {
				t.Errorf("%s: got\n%s\nwant\n%s", file, got, want)
			}
		})
	}
}

// SplitCase cuts a case file into its comments, input and want sections.
func SplitCase(data string) (comments, input, want string) {
	section := ""
	for _, line := range strings.SplitAfter(data, "\n") {
		switch strings.TrimSpace(line) {
		case "-- input --":
			section = "input"
			continue
		case "-- want --":
			section = "want"
			continue
		}
		switch section {
		case "":
			comments += line
		case "input":
			input += line
		case "want":
			want += line
		}
	}
	return comments, input, want
}
