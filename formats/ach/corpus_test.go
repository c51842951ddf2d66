package ach

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/corpus"
)

// corpusRejected lists the corpus files from folders of readable files
// (valid, returns, noc, iat) that this reader rejects, and why: each fails a
// check that a ledger must not skip. See docs/formats/ach.md.
var corpusRejected = map[string]struct {
	kind error
	line int64
	why  string
}{
	"valid/ccd-txp-credit.ach": {ErrField, 2,
		"its batch header's dates are shifted two places: the effective entry date reads \"16    \", which keys nothing"},
	"valid/ctx-nonascii-utf8.ach": {ErrControl, 17,
		"its file control counts 1 entry and addenda record where the file holds 13 (the UTF-8 characters ('¦') of its addenda are only a warning)"},
	"returns/contested-dishonored-return-PPD-R71.ach": {ErrStructure, 5,
		"one entry carries three addenda 99 (R07, R68, R71) naming different originals"},
	"returns/return-WEB-no-header-issue751.ach": {formats.ErrNotThisFormat, 1, "no file header or control"},
	"returns/return-and-noc-no-batch-controls.ach": {formats.ErrNotThisFormat, 1,
		"no file header, no batch controls, no file control"},
	"returns/return-no-file-header-control.ach": {formats.ErrNotThisFormat, 1, "no file header or control"},
}

// corpusAccepted lists the corpus files from the invalid folder that this
// reader accepts, and why.
var corpusAccepted = map[string]string{
	"invalid/ppd-mixed-origin-000TESTER.ach": "its only flaw is the immediate origin \"000TESTER\", which is not a " +
		"routing number; moov-io/ach accepts it by default, NACHA allows a company identifier there, and no key uses it",
}

// indexRow is one line of the corpus's ach/INDEX.tsv.
type indexRow struct {
	file, folder string
	entries      int
}

func readIndex(t *testing.T) []indexRow {
	t.Helper()
	tsv := strings.Split(strings.TrimSpace(string(corpus.Read(t, "ach", "INDEX.tsv"))), "\n")
	head := strings.Split(tsv[0], "\t")
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	var rows []indexRow
	for _, line := range tsv[1:] {
		f := strings.Split(line, "\t")
		n, err := strconv.Atoi(f[col["entries"]])
		if err != nil {
			t.Fatalf("INDEX.tsv: %q: %v", line, err)
		}
		rows = append(rows, indexRow{file: f[col["file"]], folder: f[col["folder"]], entries: n})
	}
	if len(rows) < 90 {
		t.Fatalf("INDEX.tsv lists %d files; expected the whole ACH corpus", len(rows))
	}
	return rows
}

// TestCorpus reads every file of the shared corpus's ACH folder as
// INDEX.tsv describes it: files of valid, returns, noc and iat read whole
// with the expected number of entries; files of invalid, fuzz and json fail
// with a ParseError that names a line. Exceptions are listed, with reasons,
// in corpusRejected and corpusAccepted.
func TestCorpus(t *testing.T) {
	for _, row := range readIndex(t) {
		t.Run(row.file, func(t *testing.T) {
			data := corpus.Read(t, "ach", row.file)
			res := readAll(t, data, Options{})
			checkNoPersonalData(t, data, res.errs)
			readable := row.folder == "valid" || row.folder == "returns" || row.folder == "noc" || row.folder == "iat"
			rejected, isRejected := corpusRejected[row.file]
			_, isAccepted := corpusAccepted[row.file]
			switch {
			case isRejected:
				expectError(t, res, rejected.kind, rejected.line)
			case readable || isAccepted:
				if len(res.errs) > 0 || !errors.Is(res.final, io.EOF) {
					t.Fatalf("rejected: %v %v", res.final, res.errs)
				}
				if len(res.recs) != row.entries {
					t.Fatalf("%d records, INDEX.tsv counts %d entries", len(res.recs), row.entries)
				}
			default:
				if len(res.errs) == 0 || !errors.Is(res.final, ErrInvalidFile) {
					t.Fatalf("accepted a file of %s: final %v", row.folder, res.final)
				}
				for _, pe := range res.errs {
					if pe.Line < 1 {
						t.Fatalf("an error without a line: %v", pe)
					}
				}
			}
		})
	}
}

// expectError requires an error of kind on line among the reader's errors,
// and the file rejected.
func expectError(t *testing.T, res readResult, kind error, line int64) {
	t.Helper()
	if !errors.Is(res.final, ErrInvalidFile) {
		t.Fatalf("final %v, want ErrInvalidFile", res.final)
	}
	for _, pe := range res.errs {
		if errors.Is(pe, kind) && pe.Line == line {
			return
		}
	}
	t.Fatalf("no %v on line %d: %v", kind, line, res.errs)
}

// checkNoPersonalData fails when an error message holds an account number
// or an individual name from the file's entry detail records.
func checkNoPersonalData(t *testing.T, data []byte, errs []*formats.ParseError) {
	t.Helper()
	var secrets []string
	for _, l := range strings.Split(string(data), "\n") {
		r := []rune(l)
		if len(r) < 94 || r[0] != '6' {
			continue
		}
		// Standard layout: account 13-29, name 55-76; IAT: account 40-74.
		for _, f := range []string{string(r[12:29]), string(r[54:76]), string(r[39:74])} {
			if f = strings.TrimSpace(f); len(f) >= 6 && strings.Trim(f, "0") != "" {
				secrets = append(secrets, f)
			}
		}
	}
	for _, pe := range errs {
		for _, s := range secrets {
			if strings.Contains(pe.Error(), s) {
				t.Errorf("an error shows %q from the file: %v", s, pe)
			}
		}
	}
}

// TestCorpusRecords checks the mapping on real files: keys that repeat, the
// direction of returns as their files state it, links, notices, IAT and ADV.
func TestCorpusRecords(t *testing.T) {
	type want struct {
		key, detail string
		kind        formats.Kind
		dir         formats.Direction
		amount      int64
		link        string // "<prefix>|<reference>|<suffix>", or ""
	}
	cases := []struct {
		file string
		at   int // index of the record checked
		want want
	}{
		{"returns/dishonored-return-POS-R68.ach", 0, want{"ach:231380104:0000-00-00:231380100000001",
			"dishonored return R68", formats.Return, formats.Debit, 25000, "ach:231380104:|059999990000301|:return:dishonored"}},
		{"returns/return-WEB-R01-R03.ach", 0, want{"ach:123456789:2000-01-01:091000017611242",
			"return R01", formats.Return, formats.Debit, 12354, "ach:123456789:|091400600000001|:return"}},
		{"returns/return-WEB-R01-R03.ach", 1, want{"ach:123456789:2000-01-01:021000029461242",
			"return R03", formats.Return, formats.Credit, 4565, "ach:123456789:|091400600000003|:return"}},
		{"returns/iat-return-R01.ach", 0, want{"ach:123456789:0000-00-00:231380100000001",
			"return R01", formats.Return, formats.Credit, 100000, "ach:123456789:|231380100000001|:return"}},
		{"noc/cor-C01.ach", 0, want{"ach:121042882:0000-00-00:121042880000001",
			"NOC C01", formats.Notice, formats.Credit, 0, "ach:121042882:|121042880000001|:noc"}},
		{"valid/adv.ach", 1, want{"ach:121042882:2019-08-16:011000010500002",
			"ADV 82 debit", formats.Clearing, formats.Debit, 250000, ""}},
		{"valid/ack.ach", 0, want{"ach:231380104:2019-08-16:231380100000001",
			"ACK 24 zero-dollar", formats.Notice, formats.Credit, 0, ""}},
		{"valid/ppd-trace-number-collision.ach", 3, want{"ach:121042882:2019-08-27:121042880000001",
			"PPD 22 credit", formats.Clearing, formats.Credit, 100000, ""}},
	}
	for _, tc := range cases {
		t.Run(tc.file+"#"+strconv.Itoa(tc.at), func(t *testing.T) {
			recs := mustRead(t, corpus.Read(t, "ach", tc.file))
			r := recs[tc.at]
			link := ""
			if r.Link != nil {
				link = r.Link.KeyPrefix + "|" + r.Link.Reference + "|" + r.Link.Suffix
			}
			got := want{r.Key, r.Detail, r.Kind, r.Direction, r.Amount, link}
			if got != tc.want {
				t.Fatalf("record %d\n got %+v\nwant %+v", tc.at, got, tc.want)
			}
		})
	}
	// The trace numbers of this file repeat across batches of one company
	// and date: the keys repeat too, and both records are returned.
	recs := mustRead(t, corpus.Read(t, "ach", "valid/ppd-trace-number-collision.ach"))
	if recs[0].Key != recs[3].Key || recs[0].Line == recs[3].Line {
		t.Fatalf("records 0 and 3: %s line %d, %s line %d", recs[0].Key, recs[0].Line, recs[3].Key, recs[3].Line)
	}
}
