package csv

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/corpus"
	"github.com/clearing-dev/clearing/internal/money"
)

// fuzzMapping exercises what the presets do not: a detected delimiter, a
// declared thousands separator, a split account and a type column.
const fuzzMapping = `
source = "fuzz"
key = ["id"]
reference = "ref"
amount = "amount"
amount_unit = "major"
thousands = ","
currency = "currency"
value_date = "date"
account = ["bank", "acct"]
skip_column = "type"
skip_values = ["subtotal"]
type_column = "type"
fee_values = ["fee"]
`

// fuzzMappings are the fixed mappings FuzzReader reads with; its first
// argument picks one.
func fuzzMappings(t testing.TB) []*Mapping {
	out := []*Mapping{mustMapping(t, fuzzMapping)}
	for _, name := range Presets() {
		m, err := LoadMapping(PresetPrefix + name)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// corpusSeeds returns text files of the shared corpus (BAI2 files, which are
// comma-separated, and ACH files), when the corpus is configured. A fuzz
// target must also run without the corpus, so the corpus is only consulted
// when CLEARING_CORPUS is set.
func corpusSeeds(f *testing.F) [][]byte {
	if os.Getenv("CLEARING_CORPUS") == "" {
		return nil
	}
	var paths []string
	for _, pattern := range []string{"bai2/*.txt", "bai2/fuzz/*", "ach/valid/*"} {
		found, _ := filepath.Glob(filepath.Join(corpus.Dir(f), filepath.FromSlash(pattern)))
		paths = append(paths, found...)
	}
	var out [][]byte
	for _, p := range paths[:min(len(paths), 60)] {
		if b, err := os.ReadFile(p); err == nil {
			out = append(out, b)
		}
	}
	return out
}

func generatedSeeds(t testing.TB) map[string][][]byte {
	out := map[string][][]byte{}
	for _, preset := range Presets() {
		for _, o := range []GenerateOptions{{}, {BOM: true, CRLF: true, QuoteAll: true, SubtotalEvery: 2, NewRows: 2, Shuffle: true}} {
			o.Preset, o.Rows, o.Seed = preset, 4, 9
			var b bytes.Buffer
			if _, err := Generate(&b, o); err != nil {
				t.Fatal(err)
			}
			out[preset] = append(out[preset], b.Bytes())
		}
	}
	return out
}

func FuzzReader(f *testing.F) {
	mappings := fuzzMappings(f)
	f.Add(uint8(0), []byte("id,ref,date,type,amount,currency,bank,acct\r\n1,r1,2026-11-29,charge,\"1,234.50\",USD,021000021,1234\r\n,,,subtotal,,,,\r\n2,r2,2026-11-29,fee,-0.30,BHD,021000021,1234\n"))
	f.Add(uint8(0), []byte("\ufeffid;ref;date;type;amount;currency;bank;acct\n\"a\n\";r;2026-11-29;x;1;JPY;1;2\n"))
	for i, name := range Presets() {
		for _, seed := range generatedSeeds(f)[name] {
			f.Add(uint8(i+1), seed)
		}
	}
	for _, seed := range corpusSeeds(f) {
		f.Add(uint8(0), seed)
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		m := mappings[int(which)%len(mappings)]
		r, err := NewReader(bytes.NewReader(data), m, Options{FileID: "fuzz.csv", Hasher: testHasher, Limits: formats.Limits{MaxLineBytes: 4096}})
		if err != nil {
			if !strings.Contains(err.Error(), "line ") {
				t.Fatalf("NewReader error names no line: %v", err)
			}
			return
		}
		checkRecords(t, r, m, len(data))
	})
}

// checkRecords reads r to the end and checks every record and error against
// the Reader contract.
func checkRecords(t *testing.T, r *Reader, m *Mapping, size int) {
	var lastLine, lastOffset int64 = 0, -1
	for n := 0; n <= size+1; n++ {
		rec, err := r.Next()
		if err == io.EOF {
			return
		}
		var pe *formats.ParseError
		switch {
		case errors.As(err, &pe):
			if pe.Line <= lastLine || pe.Offset <= lastOffset {
				t.Fatalf("error at line %d, offset %d after line %d, offset %d: %v", pe.Line, pe.Offset, lastLine, lastOffset, err)
			}
			lastLine, lastOffset = pe.Line, pe.Offset
			continue
		case err != nil:
			if !strings.Contains(err.Error(), "line ") {
				t.Fatalf("final error names no line: %v", err)
			}
			return
		}
		if rec.Line <= lastLine || rec.Offset <= lastOffset || rec.Offset >= int64(size) {
			t.Fatalf("record at line %d, offset %d after line %d, offset %d", rec.Line, rec.Offset, lastLine, lastOffset)
		}
		lastLine, lastOffset = rec.Line, rec.Offset
		if !strings.HasPrefix(rec.Key, "csv:"+m.Source+":") || !utf8.ValidString(rec.Key) || rec.Amount < 0 {
			t.Fatalf("bad record %+v", rec)
		}
		if rec.Kind == formats.Skip {
			continue
		}
		if _, err := money.LookupCurrency(rec.Currency); err != nil || (rec.Direction != formats.Credit && rec.Direction != formats.Debit) || rec.Reference == "" {
			t.Fatalf("bad record %+v", rec)
		}
	}
	t.Fatal("the reader did not reach the end of the input")
}

func FuzzScanner(f *testing.F) {
	f.Add(uint8(0), []byte("a,b\n\"c\"\"d\",\"e\nf\"\r\n\n,\n"))
	f.Add(uint8(1), []byte("a;\"b;c\"\r\nx\ry;z\r"))
	for _, seeds := range generatedSeeds(f) {
		for _, s := range seeds {
			f.Add(uint8(0), s)
		}
	}
	for _, seed := range corpusSeeds(f) {
		f.Add(uint8(0), seed)
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		compareWithEncodingCSV(t, data, candidates[int(which)%len(candidates)])
	})
}

func FuzzMapping(f *testing.F) {
	f.Add([]byte(contractMapping))
	f.Add([]byte(fuzzMapping))
	f.Add([]byte("preset = \"direction\"\nsource = \"x\"\ndelimiter = \";\"\n[[skip]]\ncolumn = \"#2\"\nvalues = [\"\"]\n"))
	f.Add([]byte("source = \"s\"\nheader = false\ncolumns = [\"a\", \"b\"]\nkey = \"a\"\namount = \"#2\"\namount_unit = \"minor\"\ncurrency_fixed = \"JPY\"\nvalue_date = \"a\"\ndate_layout = \"20060102\"\n"))
	for _, name := range Presets() {
		b, err := presetFS.ReadFile("presets/" + name + ".toml")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, seed := range corpusSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseMapping(data)
		if err != nil {
			if !errors.Is(err, ErrMapping) && !errors.Is(err, ErrUnknownPreset) {
				t.Fatalf("error wraps no mapping sentinel: %v", err)
			}
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("a parsed mapping fails validation: %v", err)
		}
		in := "id,date,amount,currency\n1,2026-11-29,1.00,USD\n"
		if r, err := NewReader(strings.NewReader(in), m, Options{FileID: "f.csv", Hasher: testHasher}); err == nil {
			checkRecords(t, r, m, len(in))
		} else if !strings.Contains(err.Error(), "line ") && !errors.Is(err, ErrMapping) {
			t.Fatalf("NewReader error names no line: %v", err)
		}
	})
}

// TestCorpusFilesAreRefusedCleanly reads the shared corpus's text files,
// which are not settlement exports, with every fixed mapping: each must end
// in records or errors that name a line, never a panic or a silent stop.
func TestCorpusFilesAreRefusedCleanly(t *testing.T) {
	var files []string
	for _, dir := range []string{"bai2", filepath.Join("ach", "valid")} {
		found, _ := filepath.Glob(filepath.Join(corpus.Dir(t, dir), "*"))
		files = append(files, found...)
	}
	if len(files) == 0 {
		t.Fatal("the corpus has no text files")
	}
	for _, m := range fuzzMappings(t) {
		for _, p := range files {
			data, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			t.Run(m.Source+"/"+filepath.Base(p), func(t *testing.T) {
				r, err := NewReader(bytes.NewReader(data), m, Options{FileID: filepath.Base(p), Hasher: testHasher})
				if err != nil {
					if !strings.Contains(err.Error(), "line ") {
						t.Fatalf("NewReader error names no line: %v", err)
					}
					return
				}
				checkRecords(t, r, m, len(data))
			})
		}
	}
}
