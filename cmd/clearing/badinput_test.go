package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clearing-dev/clearing/formats/ach"
	"github.com/clearing-dev/clearing/formats/bai2"
	"github.com/clearing-dev/clearing/formats/csv"
	"github.com/clearing-dev/clearing/formats/iso8583"
)

// hostileInputs are files and paths that no command may read into the
// ledger or the statement side.
type hostileInputs struct {
	dir                              string
	ach, csv, bai2, isoRDW, isoHex   string // small valid files, for wrong flags
	empty, garbage, sparse           string
	longACH, longCSV, longBAI2       string // a 10 MB line each
	longISOHex                       string
	directory, missing, missingDir   string
	unreadable                       string
	devZero, fifo, loop              string
	unknownKeyMap, garbageMap, okMap string
}

// tenMB is the length of the overlong lines: far past every reader's line
// limit, small enough to write quickly.
const tenMB = 10 << 20

func newHostileInputs(t *testing.T) hostileInputs {
	t.Helper()
	in := hostileInputs{dir: t.TempDir()}
	in.writeValid(t)
	in.writeHostile(t)
	in.makePaths(t)
	mapping, err := os.ReadFile(filepath.Join("..", "..", "formats", "csv", "presets", "signed-amount.toml"))
	if err != nil {
		t.Fatal(err)
	}
	in.okMap = in.write(t, "ok.toml", mapping)
	in.unknownKeyMap = in.write(t, "typo.toml", bytes.Replace(mapping, []byte("\namount ="), []byte("\nammount ="), 1))
	in.garbageMap = in.write(t, "garbage.toml", noise(4096))
	return in
}

// write writes a file into the inputs' folder and returns its path.
func (in *hostileInputs) write(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(in.dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// noise is n deterministic random bytes.
func noise(n int) []byte {
	b := make([]byte, n)
	rng := rand.New(rand.NewPCG(41, 42))
	for i := range b {
		b[i] = byte(rng.UintN(256))
	}
	return b
}

// writeValid writes a small valid file of each format, for the cases that
// read one with the wrong flags.
func (in *hostileInputs) writeValid(t *testing.T) {
	t.Helper()
	gen := func(name string, fn func(*bytes.Buffer) error) string {
		var b bytes.Buffer
		if err := fn(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return in.write(t, name, b.Bytes())
	}
	in.ach = gen("good.ach", func(b *bytes.Buffer) error {
		return ach.WriteEntries(b, ach.DefaultHeader(created), ach.GenerateEntries(41, 20))
	})
	in.csv = gen("good.csv", func(b *bytes.Buffer) error {
		_, err := csv.Generate(b, csv.GenerateOptions{Preset: "signed-amount", Rows: 20, Seed: 41})
		return err
	})
	in.bai2 = gen("good.bai2", func(b *bytes.Buffer) error {
		return bai2.Generate(b, bai2.RandomLines(bai2.RandomOptions{Lines: 20, Seed: 41}), bai2.GenerateOptions{})
	})
	iso := func(framing string) func(*bytes.Buffer) error {
		return func(b *bytes.Buffer) error {
			_, err := iso8583.Generate(b, iso8583.GenerateOptions{Seed: 41, Messages: 20, Framing: framing})
			return err
		}
	}
	in.isoRDW, in.isoHex = gen("good.rdw", iso(iso8583.FramingRDW)), gen("good.hex", iso(iso8583.FramingHex))
}

// writeHostile writes the hostile files: empty, noise, a 2 GiB hole, and
// valid files with one 10 MB line.
func (in *hostileInputs) writeHostile(t *testing.T) {
	t.Helper()
	in.empty = in.write(t, "empty.ach", nil)
	in.garbage = in.write(t, "garbage.bin", noise(64<<10))
	in.sparse = in.write(t, "sparse.ach", nil)
	// A 2 GiB hole: no disk is used, and a reader that read it whole would
	// take seconds; the size limit must refuse it from its size alone.
	if err := os.Truncate(in.sparse, 2<<30); err != nil {
		t.Fatal(err)
	}
	// A 10 MB line in an otherwise valid file of each text format: the
	// second line of ACH, CSV and BAI2, the first of hex ISO 8583.
	long := func(name, valid string, at int, line string) string {
		data, err := os.ReadFile(valid)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(data), "\n")
		lines[at] = line + "\n"
		return in.write(t, name, []byte(strings.Join(lines, "")))
	}
	in.longACH = long("long.ach", in.ach, 1, "5"+strings.Repeat("0", tenMB))
	in.longCSV = long("long.csv", in.csv, 1, "tx_1,2026-11-29,charge,1.00,USD,acct_1,"+strings.Repeat("x", tenMB))
	in.longBAI2 = long("long.bai2", in.bai2, 1, "02,"+strings.Repeat("9", tenMB))
	in.longISOHex = long("long.hex", in.isoHex, 0, strings.Repeat("30", tenMB/2))
}

// makePaths makes the paths that are not regular readable files.
func (in *hostileInputs) makePaths(t *testing.T) {
	t.Helper()
	in.directory = filepath.Join(in.dir, "a-directory")
	in.missing = filepath.Join(in.dir, "no-such-file.ach")
	in.missingDir = filepath.Join(in.dir, "no-such-dir", "day1.ach")
	in.unreadable = in.write(t, "unreadable.ach", []byte("101"))
	in.devZero = filepath.Join(in.dir, "zero.ach")
	in.fifo = filepath.Join(in.dir, "pipe.ach")
	in.loop = filepath.Join(in.dir, "loop.ach")
	for _, err := range []error{
		os.Mkdir(in.directory, 0o755),
		os.Chmod(in.unreadable, 0),
		os.Symlink("/dev/zero", in.devZero),
		syscall.Mkfifo(in.fifo, 0o644),
		os.Symlink(in.loop, in.loop),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// badInput is one hostile input: the command line, and a fragment of the
// error that must name the problem.
type badInput struct {
	name string
	args []string
	want string
}

func ingestCases(in hostileInputs) []badInput {
	ing := func(args ...string) []string { return append([]string{"ingest"}, args...) }
	return []badInput{
		{"empty file", ing(in.empty), "is empty"},
		{"binary garbage, detected", ing(in.garbage), "is not a file whose format can be told from its first bytes"},
		{"binary garbage as ACH", ing("--format", "ach", in.garbage), "offset 0"},
		{"binary garbage as ISO 8583", ing("--format", "iso8583", in.garbage), "iso8583"},
		{"binary garbage as CSV", ing("--format", "csv", "--map", "preset:signed-amount", in.garbage), "line"},
		{"2 GB sparse file", ing(in.sparse), "over the limit"},
		{"file over --max-file-bytes", ing("--max-file-bytes", "100", in.ach), "over the limit of 100 bytes"},
		{"10 MB line in ACH", ing(in.longACH), "line 2"},
		{"10 MB line in CSV", ing("--format", "csv", "--map", "preset:signed-amount", in.longCSV), "exceeds"},
		{"10 MB line in hex ISO 8583", ing("--format", "iso8583", "--iso-framing", "hex", in.longISOHex), "longer than"},
		{"unknown format", ing("--format", "nosuch", in.ach), `"nosuch" for "--format" flag`},
		{"BAI2 statement given to ingest", ing("--format", "bai2", in.bai2), `"bai2" for "--format" flag`},
		{"ACH read as CSV", ing("--format", "csv", "--map", "preset:signed-amount", in.ach), "delimiter"},
		{"CSV read as ACH", ing("--format", "ach", in.csv), "not of this format"},
		{"CSV without a mapping", ing("--format", "csv", in.csv), "needs a column mapping"},
		{"RDW ISO 8583 read as hex", ing("--format", "iso8583", "--iso-framing", "hex", in.isoRDW), "framing error"},
		{"hex ISO 8583 read as RDW", ing("--format", "iso8583", "--iso-framing", "rdw", in.isoHex), "framing error"},
		{"unknown ISO 8583 framing", ing("--format", "iso8583", "--iso-framing", "nosuch", in.isoHex), `"nosuch" for "--iso-framing" flag`},
		{"directory", ing(in.directory), "is a directory"},
		{"missing file", ing(in.missing), "no such file"},
		{"missing parent directory", ing(in.missingDir), "no such file"},
		{"unreadable file", ing(in.unreadable), "permission denied"},
		{"symlink to /dev/zero", ing(in.devZero), "not a regular file"},
		{"named pipe", ing("--format", "ach", in.fifo), "not a regular file"},
		{"symlink loop", ing(in.loop), "too many levels of symbolic links"},
		{"mapping with an unknown key", ing("--map", in.unknownKeyMap, in.csv), `unknown key "ammount"`},
		{"mapping that is not TOML", ing("--map", in.garbageMap, in.csv), "invalid mapping"},
		{"unknown mapping preset", ing("--map", "preset:nosuch", in.csv), `unknown preset "nosuch"`},
	}
}

func statementCases(in hostileInputs) []badInput {
	imp := func(args ...string) []string {
		return append([]string{"statement", "import", "--source", "bank"}, args...)
	}
	return []badInput{
		{"empty file", imp(in.empty), "is empty"},
		{"binary garbage, detected", imp(in.garbage), "is not a file whose format can be told from its first bytes"},
		{"binary garbage as BAI2", imp("--format", "bai2", in.garbage), "line 1"},
		{"2 GB sparse file", imp(in.sparse), "over the limit"},
		{"file over --max-file-bytes", imp("--max-file-bytes", "100", in.bai2), "over the limit of 100 bytes"},
		{"10 MB line in BAI2", imp(in.longBAI2), "limit"},
		{"10 MB line in CSV", imp("--format", "csv", "--map", in.okMap, in.longCSV), "exceeds"},
		{"10 MB line in ACH", imp(in.longACH), "line 2"},
		{"unknown format", imp("--format", "nosuch", in.bai2), `"nosuch" for "--format" flag`},
		{"BAI2 read as CSV", imp("--format", "csv", "--map", in.okMap, in.bai2), "column"},
		{"CSV read as BAI2", imp("--format", "bai2", in.csv), "bai2"},
		{"unknown perspective", imp("--perspective", "sideways", in.bai2), `"sideways" for "--perspective" flag`},
		{"directory", imp(in.directory), "is a directory"},
		{"missing file", imp(in.missing), "no such file"},
		{"missing parent directory", imp(in.missingDir), "no such file"},
		{"unreadable file", imp(in.unreadable), "permission denied"},
		{"symlink to /dev/zero", imp(in.devZero), "not a regular file"},
		{"named pipe", imp("--format", "bai2", in.fifo), "not a regular file"},
		{"mapping with an unknown key", imp("--format", "csv", "--map", in.unknownKeyMap, in.csv), `unknown key "ammount"`},
	}
}

// Hostile input to ingest and statement import: each is refused with exit
// 1 (2 for a mistyped flag value) and an error that names the problem, and nothing is written but the
// rejected run that records the file: the ledger, audit trail, other runs,
// statement lines and reconciliation side are as they were.
func TestHostileInputIsRefusedAndWritesNothing(t *testing.T) {
	t.Parallel()
	in := newHostileInputs(t)
	c := newCLI(t)
	c.ingest(0, in.ach)
	c.must(0, "statement", "import", "--source", "bank", in.bai2)
	before := c.fullSnapshot()
	if !strings.Contains(before, "== runs\n") || c.postings() == 0 {
		t.Fatal("the ledger is empty: there is nothing for a bad input to disturb")
	}
	for _, group := range []struct {
		name  string
		cases []badInput
	}{{"ingest", ingestCases(in)}, {"statement import", statementCases(in)}} {
		for _, tc := range group.cases {
			t.Run(group.name+"/"+tc.name, func(t *testing.T) {
				if strings.Contains(tc.name, "unreadable") && os.Geteuid() == 0 {
					t.Skip("running as root, which reads a file whatever its mode")
				}
				c := c.withTenant(t, c.tenant)
				r := c.runWithin(5*time.Second, tc.args...)
				// A mistyped flag value is a usage error, refused while the
				// flags are parsed (the wants of those cases name the flag).
				want := exitError
				if strings.Contains(tc.want, `" flag`) || strings.Contains(tc.want, "unknown preset") {
					want = exitUsage
				}
				if r.code != want {
					t.Fatalf("want exit %d\n%v", want, r)
				}
				// The log line quotes the error, escaping its quotes.
				if !strings.Contains(strings.ReplaceAll(r.stderr, `\"`, `"`), tc.want) {
					t.Errorf("the error does not say %q:\n%s", tc.want, r.stderr)
				}
				if after := c.fullSnapshot(); after != before {
					t.Fatalf("a refused input changed the database:\n%s", diffLines(before, after))
				}
			})
		}
	}
}

// runWithin runs the binary and kills it, failing the test, when it has
// not ended within limit: a command must refuse a hostile input, not wait
// on it.
func (c *cli) runWithin(limit time.Duration, args ...string) result {
	c.t.Helper()
	p := c.start(args...)
	select {
	case <-p.done:
	case <-time.After(limit):
		p.kill(c.t)
		r, _ := p.wait(c.t)
		c.t.Fatalf("still running after %v, waiting on its input instead of refusing it; killed\n%v", limit, r)
	}
	r, _ := p.wait(c.t)
	return r
}
