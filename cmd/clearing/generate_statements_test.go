package main

import (
	"bytes"
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/formats/camt"
	"github.com/clearing-dev/clearing/formats/ipm"
	"github.com/clearing-dev/clearing/formats/mt940"
)

// generated runs 'clearing generate ARGS --out FILE' twice and fails unless
// both runs wrote the same bytes; it returns the file's path.
func (c *cli) generated(name string, args ...string) string {
	c.t.Helper()
	var first []byte
	var path string
	for i := range 2 {
		path = filepath.Join(c.dir, name)
		if i == 1 {
			path += ".again"
		}
		c.must(0, append(append([]string{"generate"}, args...), "--out", path)...)
		b, err := os.ReadFile(path)
		if err != nil {
			c.t.Fatal(err)
		}
		if i == 0 {
			first = b
		} else if !bytes.Equal(first, b) {
			c.t.Fatalf("generate %v wrote different bytes twice", args)
		}
	}
	if len(first) == 0 {
		c.t.Fatalf("generate %v wrote nothing", args)
	}
	return filepath.Join(c.dir, name)
}

// TestGenerateCamtImports writes a camt.052 with the command and imports
// it: the lines sum to the booked entries of the statements the same
// options generate, and the statements add up.
func TestGenerateCamtImports(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	path := c.generated("statement.xml", "camt", "--message", "052", "--version", "001.04", "--statements", "3",
		"--entries", "40", "--currency", "CHF", "--batch-percent", "20", "--charges-percent", "30", "--seed", "8")
	sum := c.importStatement(0, "bank", path)
	if sum.Format != "camt" || sum.Added == 0 || len(sum.Warnings) != 0 {
		t.Fatalf("summary %+v", sum)
	}
	specs := camt.RandomStatements(camt.RandomOptions{Seed: 8, Statements: 3, Entries: 40, Currency: "CHF", BatchPercent: 20, ChargesPercent: 30})
	if got, want := c.storedSums("bank"), specSums(specs); !got.equal(want) {
		t.Fatalf("lines sum to %v, the generated statements to %v", got, want)
	}
	if n := c.count(`SELECT count(*) FROM statement_balances WHERE tenant_id = $1 AND difference_minor = 0`, c.tenant); n != 3 {
		t.Fatalf("%d statements add up, want 3", n)
	}
	if again := c.importStatement(0, "bank", path); again.Added != 0 {
		t.Fatalf("re-import added %d", again.Added)
	}
}

// TestGenerateMT940Imports writes MT940 in its envelope with CRLF and
// imports it: one line per :61:, summing to what the options generate.
func TestGenerateMT940Imports(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	path := c.generated("statement.sta", "mt940", "--statements", "4", "--lines", "25", "--currency", "JPY",
		"--envelope", "--crlf", "--blank-reference-percent", "10", "--seed", "2")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte("\r\n")) || !bytes.HasPrefix(raw, []byte("{1:")) {
		t.Fatal("not CRLF in an envelope")
	}
	sum := c.importStatement(0, "bank", path)
	if sum.Format != "mt940" || sum.Added != 100 {
		t.Fatalf("summary %+v, want 100 lines", sum)
	}
	want := bankSums{}
	for _, s := range mt940.RandomStatements(mt940.RandomOptions{Seed: 2, Statements: 4, Lines: 25, Currency: "JPY", BlankReferencePercent: 10}) {
		for _, l := range s.Lines {
			want.add(s.Currency, big.NewInt(l.Amount), l.Direction == formats.Credit)
		}
	}
	if got := c.storedSums("bank"); !got.equal(want) {
		t.Fatalf("lines sum to %v, the generated statements to %v", got, want)
	}
}

// TestGenerateIPMIngests writes a blocked cp037 IPM file with its
// lifecycle and ingests it: every presentment, chargeback, second
// presentment, reversal and fee posts once; the header and trailer are
// skipped.
func TestGenerateIPMIngests(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	path := c.generated("clearing.ipm", "ipm", "--presentments", "60", "--blocked", "--encoding", "cp037", "--lifecycle", "--seed", "4")
	var buf bytes.Buffer
	gen, err := ipm.Generate(&buf, ipm.GenerateOptions{Seed: 4, Presentments: 60, Blocked: true, Encoding: ipm.EncodingCP037, Lifecycle: true, Day: defaultGenerateDate})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(raw, buf.Bytes()) {
		t.Fatal("the command's file is not what ipm.Generate writes for the same options")
	}
	sums := c.ingest(0, path)
	want := gen.Presentments + gen.Chargebacks + gen.Second + gen.Reversals + gen.Fees
	if len(sums) != 1 || sums[0].Format != "ipm" || sums[0].Posted != want || sums[0].Skipped != gen.Controls {
		t.Fatalf("summary %+v, want %d posted and %d skipped", sums, want, gen.Controls)
	}
	if n := c.postings(); n != want {
		t.Fatalf("%d postings, want %d", n, want)
	}
	if again := c.ingest(0, path); again[0].Posted != 0 || again[0].Duplicates != want {
		t.Fatalf("re-ingest: %+v", again)
	}
}
