package iso8583

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/corpus"
)

// corpusRow is one line of the corpus's iso8583/INDEX.tsv.
type corpusRow struct {
	file, kind, spec, moov87, moovASCII string
}

func corpusIndex(t *testing.T) []corpusRow {
	t.Helper()
	r := csv.NewReader(bytes.NewReader(corpus.Read(t, "iso8583", "INDEX.tsv")))
	r.Comma, r.LazyQuotes, r.FieldsPerRecord = '\t', true, -1
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := map[string]int{}
	for i, h := range recs[0] {
		head[h] = i
	}
	var rows []corpusRow
	for _, rec := range recs[1:] {
		rows = append(rows, corpusRow{
			file: rec[head["file"]], kind: rec[head["kind"]], spec: rec[head["spec_to_use"]],
			moov87: rec[head["observed_moov_v0.26.1_Spec87"]], moovASCII: rec[head["observed_moov_v0.26.1_Spec87ASCII"]],
		})
	}
	return rows
}

// corpusWant is what the reader makes of a corpus file under each built-in
// spec: a record ("notice <key>", "skip <detail>"), or an error ("decode
// <field>", "invalid <field>"). deviates explains an outcome that differs
// from what moov-io/iso8583 itself does with the file.
type corpusWant struct {
	spec87, spec87ASCII string
	deviates            string
}

var corpusWants = map[string]corpusWant{
	"moov-testdata/financial_transaction_message.dat": {
		spec87: "notice iso8583:2000001:000000115604:0200 0200 financial request, inquiry", spec87ASCII: "decode DE32"},
	"moov-testdata/network_management_message.dat": {
		spec87: "skip 0800 network management request", spec87ASCII: "decode DE7"},
	"moov-testdata/error_message.dat": {spec87: "decode DE55", spec87ASCII: "decode DE55"},
	"moov-testdata/network_management_message_response.dat": {
		spec87: "skip 0810 network management response", spec87ASCII: "decode DE7",
		deviates: "spec87 defines DE73 (action date) as ISO 8583:1987 does; moov's Spec87 leaves it out"},
	"moov-testdata/network_management_message_with_track.dat":       {spec87: "decode DE35", spec87ASCII: "decode DE7"},
	"moov-testdata/network_management_message_with_error_track.dat": {spec87: "decode DE35", spec87ASCII: "decode DE7"},
	"moov-testdata/message_with_character_ebcdic_encoding.dat":      {spec87: "decode DE42", spec87ASCII: "decode bitmap"},
	"moov-testdata/message_with_number_bcd_encoding.dat":            {spec87: "decode DE7", spec87ASCII: "decode bitmap"},
	"moov-testdata/message_with_hex_bcd.dat":                        {spec87: "decode DE48", spec87ASCII: "decode bitmap"},
	"moov-testdata/message_with_hex_rbcd.dat":                       {spec87: "decode DE48", spec87ASCII: "decode bitmap"},
	"moov-testdata/message_with_hex_length.dat":                     {spec87: "decode DE32", spec87ASCII: "decode DE11"},
	"moov-testdata/message_with_indicate_numeric.dat":               {spec87: "decode DE28", spec87ASCII: "decode DE7"},
	"moov-testdata/message_with_error_indicate_numeric.dat":         {spec87: "decode DE28", spec87ASCII: "decode DE7"},
	"inline-vectors/moov-message_test-0100-simple.txt": {spec87: "invalid DE3", spec87ASCII: "decode DE2",
		deviates: "it decodes, but processing code 123456 (transaction type 12) is not one the reader can post, and it has no RRN"},
	"inline-vectors/moov-message_test-0100-three-bitmaps.txt":                {spec87: "decode DE130", spec87ASCII: "decode bitmap"},
	"inline-vectors/moov-message_test-TestPackUnpack-0100-binary-bitmap.hex": {spec87: "decode bitmap", spec87ASCII: "decode bitmap"},
}

// outcome reads one corpus message and says what came of it.
func outcome(t *testing.T, data []byte, framing, spec string) string {
	opts := testOptions(framing)
	opts.Spec = spec
	res := readAll(t, data, opts)
	checkNoPAN(t, res)
	var pe *formats.ParseError
	switch {
	case len(res.errs) > 0 && errors.As(res.errs[0], &pe) && errors.Is(pe, ErrDecode):
		return "decode " + pe.Field
	case len(res.errs) > 0 && errors.As(res.errs[0], &pe) && errors.Is(pe, ErrInvalid):
		return "invalid " + pe.Field
	case len(res.errs) > 0 || res.final != io.EOF || len(res.records) != 1:
		return fmt.Sprintf("unexpected: errors %v, final %v, %d records", res.errs, res.final, len(res.records))
	case res.records[0].Kind == formats.Skip:
		return "skip " + res.records[0].Detail
	}
	return fmt.Sprintf("%s %s %s", res.records[0].Kind, res.records[0].Key, res.records[0].Detail)
}

var moovField = regexp.MustCompile(`field (\d+)`)

// moovOutcome turns INDEX.tsv's observation of moov into the reader's
// terms: "ok", or the field moov failed on.
func moovOutcome(observed string) string {
	switch {
	case strings.HasPrefix(observed, "OK"):
		return "ok"
	case strings.Contains(observed, "unpack bitmap"):
		return "decode bitmap"
	}
	if m := moovField.FindStringSubmatch(observed); m != nil {
		return "decode DE" + m[1]
	}
	return "unknown: " + observed
}

func TestCorpus(t *testing.T) {
	rows := corpusIndex(t)
	listed := map[string]bool{}
	for _, row := range rows {
		listed[row.file] = true
		t.Run(row.file, func(t *testing.T) {
			want, ok := corpusWants[row.file]
			if !ok {
				t.Fatalf("INDEX.tsv lists %s (%s); add what the reader should make of it", row.file, row.kind)
			}
			framing := FramingRaw
			if strings.HasSuffix(row.file, ".hex") {
				framing = FramingHex
			}
			data := corpus.Read(t, "iso8583", row.file)
			for _, c := range []struct{ spec, want, moov string }{
				{SpecName87, want.spec87, row.moov87},
				{SpecName87ASCII, want.spec87ASCII, row.moovASCII},
			} {
				got := outcome(t, data, framing, c.spec)
				if got != c.want {
					t.Errorf("%s: %s, want %s", c.spec, got, c.want)
				}
				// Where moov decodes, the reader must too (then check what
				// it decoded); where moov fails, the reader fails on the
				// same field. A deviation must say why.
				decoded := !strings.HasPrefix(got, "decode")
				moov := moovOutcome(c.moov)
				if (moov == "ok") != decoded || !decoded && moov != got {
					if want.deviates == "" || c.spec != SpecName87 {
						t.Errorf("%s: the reader gives %q, moov %q (%s)", c.spec, got, moov, c.moov)
					}
				}
			}
			// The same message detected, and framed as rdw, reads the same.
			if framing == FramingRaw {
				var buf bytes.Buffer
				w, _ := NewWriter(&buf, FramingRDW, mustSpec(t, SpecName87))
				if err := w.WritePacked(data); err != nil {
					t.Fatal(err)
				}
				w.Flush()
				if got := outcome(t, buf.Bytes(), FramingRDW, SpecName87); got != want.spec87 {
					t.Errorf("framed as rdw: %s, want %s", got, want.spec87)
				}
			}
		})
	}
	for _, dir := range []string{"moov-testdata", "inline-vectors"} {
		entries, err := os.ReadDir(corpus.Dir(t, "iso8583", dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if name := filepath.ToSlash(filepath.Join(dir, e.Name())); !listed[name] {
				t.Errorf("%s is in the corpus but not in INDEX.tsv", name)
			}
		}
	}
	var extra []string
	for f := range corpusWants {
		if !listed[f] {
			extra = append(extra, f)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("expectations for files INDEX.tsv no longer lists: %v", extra)
	}
}

func mustSpec(t testing.TB, name string) *Spec {
	t.Helper()
	s, err := LoadSpec(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
