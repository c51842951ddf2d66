package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/clearing-dev/clearing/internal/output"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files in testdata")

// fixtures are the hand-built reports that the golden files render.
var fixtures = []struct {
	name  string
	build func() *Report
}{
	{"full", fullReport},
	{"balanced", balancedReport},
	{"empty", emptyReport},
}

// formats pairs each format with the extension of its golden file.
var formats = []struct{ format, ext string }{
	{output.Table, "txt"},
	{output.CSV, "csv"},
	{output.JSON, "json"},
	{HTML, "html"},
}

// TestGolden renders every fixture in every format and compares the bytes
// with testdata/<fixture>.<ext>. go test -run TestGolden -rewrite
// regenerates the files, which must then be reviewed like code.
func TestGolden(t *testing.T) {
	for _, fx := range fixtures {
		for _, f := range formats {
			t.Run(fx.name+"/"+f.format, func(t *testing.T) {
				var b bytes.Buffer
				if err := Write(&b, f.format, fx.build()); err != nil {
					t.Fatal(err)
				}
				path := filepath.Join("testdata", fx.name+"."+f.ext)
				if *rewrite {
					if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run with -rewrite to create it)", err)
				}
				if !bytes.Equal(b.Bytes(), want) {
					t.Errorf("%s differs from the rendering; got:\n%s", path, b.String())
				}
			})
		}
	}
}
