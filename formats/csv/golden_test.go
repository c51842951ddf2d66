package csv

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/pii"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the want sections of testdata/cases")

// testHasher is the fixed key of every test, so that account ids in golden
// files are stable.
var testHasher = pii.New("csv-test-key")

// goldenCase is one testdata/cases file: comment lines, then the sections
// "-- mapping --", "-- input --" and "-- want --". A comment line "#! crlf"
// turns the input's line ends into CRLF, "#! bom" prepends a byte order mark
// and "#! file-id NAME" sets the file id (default "input.csv").
type goldenCase struct {
	comments []string
	sections map[string]string
	order    []string
}

func parseGolden(t *testing.T, data string) goldenCase {
	t.Helper()
	gc := goldenCase{sections: map[string]string{}}
	current := ""
	for _, line := range strings.SplitAfter(data, "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "-- "); ok && strings.HasSuffix(name, " --") {
			current = strings.TrimSuffix(name, " --")
			gc.order = append(gc.order, current)
			continue
		}
		if current == "" {
			gc.comments = append(gc.comments, line)
			continue
		}
		gc.sections[current] += line
	}
	return gc
}

func (gc goldenCase) directive(name string) (string, bool) {
	for _, c := range gc.comments {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(c), "#! "+name); ok {
			return strings.TrimSpace(rest), true
		}
	}
	return "", false
}

func (gc goldenCase) input() string {
	in := gc.sections["input"]
	if _, ok := gc.directive("crlf"); ok {
		in = strings.ReplaceAll(in, "\n", "\r\n")
	}
	if _, ok := gc.directive("bom"); ok {
		in = "\ufeff" + in
	}
	return in
}

// render reads the whole input and describes every record and error.
func render(m *Mapping, in string, fileID string) string {
	var b strings.Builder
	r, err := NewReader(strings.NewReader(in), m, Options{FileID: fileID, Hasher: testHasher})
	if err != nil {
		return "reader: " + err.Error() + "\n"
	}
	for n := 0; n < 1000; n++ {
		rec, err := r.Next()
		var pe *formats.ParseError
		switch {
		case err == io.EOF:
			b.WriteString("EOF\n")
			return b.String()
		case errors.As(err, &pe):
			fmt.Fprintf(&b, "error: %v\n", err)
		case err != nil:
			fmt.Fprintf(&b, "final: %v\n", err)
			return b.String()
		default:
			b.WriteString(describe(rec) + "\n")
		}
	}
	return b.String() + "(stopped after 1000 results)\n"
}

func describe(r formats.Record) string {
	if r.Kind == formats.Skip {
		return fmt.Sprintf("%d@%d %s %s %q", r.Line, r.Offset, r.Kind, r.Key, r.Detail)
	}
	acct := "-"
	if r.Account.ID != "" {
		acct = r.Account.ID[len("cust:"):len("cust:")+8] + "/" + r.Account.Last4
	}
	return fmt.Sprintf("%d@%d %s %s ref=%s %d %s %s acct=%s %s %s %q", r.Line, r.Offset, r.Kind, r.Key, r.Reference,
		r.Amount, r.Currency, r.Direction, acct, r.ValueDate.Format("2006-01-02"), r.LineType, r.Detail)
}

func TestGolden(t *testing.T) {
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
			gc := parseGolden(t, string(data))
			var got string
			m, err := ParseMapping([]byte(gc.sections["mapping"]))
			if err != nil {
				got = "mapping: " + err.Error() + "\n"
			} else {
				fileID, ok := gc.directive("file-id")
				if !ok {
					fileID = "input.csv"
				}
				got = render(m, gc.input(), fileID)
			}
			if *rewrite {
				writeGolden(t, file, gc, got)
				return
			}
			if got != gc.sections["want"] {
				t.Errorf("%s: got\n%s\nwant\n%s", file, got, gc.sections["want"])
			}
		})
	}
}

func writeGolden(t *testing.T, file string, gc goldenCase, want string) {
	t.Helper()
	var b strings.Builder
	b.WriteString(strings.Join(gc.comments, ""))
	for _, name := range gc.order {
		if name == "want" {
			continue
		}
		b.WriteString("-- " + name + " --\n" + gc.sections[name])
	}
	b.WriteString("-- want --\n" + want)
	if err := os.WriteFile(file, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
