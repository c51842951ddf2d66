package bai2

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata/cases")

// TestCases runs the data-driven cases in testdata/cases. Each file holds
// comment lines starting with "#", a BAI2 file, a "----" line and the
// expected rendering of reading it. go test -run TestCases -rewrite
// regenerates the expectations, which must then be reviewed.
func TestCases(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "cases", "*.txt"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no cases found: %v", err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			head, want, found := strings.Cut(string(raw), "----\n")
			if !found {
				t.Fatalf("%s has no ---- separator", path)
			}
			var comments, input []string
			for _, l := range strings.SplitAfter(head, "\n") {
				if strings.HasPrefix(l, "#") {
					comments = append(comments, l)
				} else if l != "" {
					input = append(input, l)
				}
			}
			got := render(readAll(t, strings.Join(input, ""), Options{}))
			if *rewrite {
				out := strings.Join(comments, "") + strings.Join(input, "") + "----\n" + got
				if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != want {
				t.Errorf("%s:\ngot:\n%s\nwant:\n%s", path, got, want)
			}
		})
	}
}
