package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/formats/camt"
	"github.com/clearing-dev/clearing/formats/mt940"
	"github.com/clearing-dev/clearing/ingest"
	"github.com/clearing-dev/clearing/internal/corpus"
	"github.com/clearing-dev/clearing/internal/money"
	"github.com/clearing-dev/clearing/internal/report"
)

// bankFile is what a corpus file's INDEX.tsv line (and a reading of the
// file) says statement import must make of it.
type bankFile struct {
	refused bool
	lines   int64 // statement lines, settlement totals included
	// unbalanced is each statement's closing balance minus its opening
	// balance plus its booked entries, for the statements that do not add
	// up, in minor units.
	unbalanced []int64
}

var bankCorpus = map[string]bankFile{
	"camt/dvbern-camt.054_P_CH2909000000250094239_1111111112_0_2022031011011199_v2019.xml": {lines: 1},
	"camt/genkgo-camt053.v2.multi.statement.xml":                                           {lines: 2},
	"camt/genkgo-camt053.v2.wrong.xml":                                                     {refused: true},
	"camt/hbci4j-test-camt-ruecklastschrift.xml":                                           {lines: 2, unbalanced: []int64{5300}},
	"camt/kedder-davider80.xml":                                                            {lines: 16},
	"camt/moov-FI_camt_053_sample.xml.xml":                                                 {lines: 15},
	"camt/oca-test-camt053":                                                                {lines: 5, unbalanced: []int64{-43416}},
	"camt/subite-LT625883379695428516-CAMT_053-2024-03-07.xml":                             {lines: 3},
	"camt/viafintech-053-valid_example_with_datetime.xml":                                  {lines: 1},
	"mt940/jejik-volksbankenraiffeisenbanken.txt":                                          {lines: 12},
	"mt940/mt940rs-danskebank-MT940_FI_Example.sta":                                        {lines: 6},
	"mt940/oca-test-ing.940":                                                               {lines: 8},
	"mt940/wolph-ASNB-mt940.txt":                                                           {lines: 8},
	"mt940/wolph-citi-mt940.txt":                                                           {lines: 3}, // and two zero amounts, skipped
	"mt940/wolph-mBank-mt942.sta":                                                          {lines: 3},
	"mt940/wolph-raiffeisen-cmi.sta":                                                       {lines: 7, unbalanced: []int64{112326400}},
	"mt940/wolph-sberbank-171011_01234945.sta":                                             {lines: 3},
	"mt940/zilverline-knab_invalid.txt":                                                    {refused: true},
	"mt940/zilverline-rabobank_mt940_structured.txt":                                       {lines: 9},
}

// bankSums is booked credits and debits per currency, from the account
// holder's side, in minor units.
type bankSums map[string][2]*big.Int

func (s bankSums) add(cur string, v *big.Int, credit bool) {
	p, ok := s[cur]
	if !ok {
		p = [2]*big.Int{new(big.Int), new(big.Int)}
		s[cur] = p
	}
	if credit {
		p[0].Add(p[0], v)
	} else {
		p[1].Add(p[1], v)
	}
}

func (s bankSums) String() string {
	var parts []string
	for c, p := range s {
		parts = append(parts, fmt.Sprintf("%s credits %s debits %s", c, p[0], p[1]))
	}
	return strings.Join(parts, "; ")
}

func (s bankSums) equal(o bankSums) bool {
	if len(s) != len(o) {
		return false
	}
	for c, p := range s {
		q, ok := o[c]
		if !ok || p[0].Cmp(q[0]) != 0 || p[1].Cmp(q[1]) != 0 {
			return false
		}
	}
	return true
}

// storedSums sums the statement lines of a source per currency, settlement
// totals left out (they repeat their details). Lines are stored from the
// counterparty's side, so a holder's credit (money in) is a 'D' line.
func (c *cli) storedSums(source string) bankSums {
	c.t.Helper()
	rows, err := c.pool.Query(c.t.Context(), `
SELECT currency::text, coalesce(sum(amount_minor) FILTER (WHERE direction = 'D'), 0)::text,
       coalesce(sum(amount_minor) FILTER (WHERE direction = 'C'), 0)::text
  FROM statement_lines WHERE tenant_id = $1 AND source = $2 AND line_type <> 'settlement_total'
 GROUP BY currency`, c.tenant, source)
	if err != nil {
		c.t.Fatal(err)
	}
	defer rows.Close()
	out := bankSums{}
	for rows.Next() {
		var cur, cr, db string
		if err := rows.Scan(&cur, &cr, &db); err != nil {
			c.t.Fatal(err)
		}
		a, _ := new(big.Int).SetString(cr, 10)
		b, _ := new(big.Int).SetString(db, 10)
		out[cur] = [2]*big.Int{a, b}
	}
	if err := rows.Err(); err != nil {
		c.t.Fatal(err)
	}
	return out
}

// camtSums reads every Ntry of a camt document with a struct of its own and
// exact rational arithmetic, counting entries whose status is booked or
// absent: a reading that shares no code with the reader.
func camtSums(t *testing.T, raw []byte) bankSums {
	t.Helper()
	type ntry struct {
		Amt struct {
			V   string `xml:",chardata"`
			Ccy string `xml:"Ccy,attr"`
		} `xml:"Amt"`
		Ind string `xml:"CdtDbtInd"`
		Sts struct {
			V  string `xml:",chardata"`
			Cd string `xml:"Cd"`
		} `xml:"Sts"`
	}
	out := bankSums{}
	d := xml.NewDecoder(bytes.NewReader(raw))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("independent reading: %v", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "Ntry" {
			continue
		}
		var n ntry
		if err := d.DecodeElement(&n, &se); err != nil {
			t.Fatal(err)
		}
		if st := strings.TrimSpace(n.Sts.V + n.Sts.Cd); st != "" && st != "BOOK" {
			continue
		}
		out.add(n.Amt.Ccy, minorOf(t, strings.TrimSpace(n.Amt.V), n.Amt.Ccy), strings.TrimSpace(n.Ind) == "CRDT")
	}
}

var (
	mt61  = regexp.MustCompile(`^:61:\d{6}(?:\d{4}| {4})?(RC|RD|C|D)[A-Z]?(\d+,\d*)`)
	mtCur = regexp.MustCompile(`^:(?:60[FM]:[CD]\d{6}|34F:)([A-Z]{3})`)
)

// mt940Sums reads the :61: lines of an MT940 or MT942 file with a regular
// expression, in the currency of the last opening balance (or floor limit).
// RD, a reversed debit, is money in; RC money out.
func mt940Sums(t *testing.T, raw []byte) bankSums {
	t.Helper()
	out := bankSums{}
	cur := ""
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimLeft(strings.TrimRight(line, "\r"), "\x01\x03 ")
		if m := mtCur.FindStringSubmatch(line); m != nil {
			cur = m[1]
		}
		m := mt61.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		v := minorOf(t, strings.Replace(m[2], ",", ".", 1)+"0", cur)
		if v.Sign() == 0 {
			continue // a zero amount is no line
		}
		out.add(cur, v, m[1] == "C" || m[1] == "RD")
	}
	return out
}

// minorOf is a decimal amount in the currency's minor units.
func minorOf(t *testing.T, s, cur string) *big.Int {
	t.Helper()
	c := money.MustCurrency(cur)
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("amount %q", s)
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(c.Exponent)), nil)))
	if !r.IsInt() {
		t.Fatalf("amount %q is not whole minor units of %s", s, cur)
	}
	return r.Num()
}

// importStatement runs 'clearing -o json statement import' of one file
// under source, checks the exit code, and returns its summary.
func (c *cli) importStatement(want int, source, path string, flags ...string) ingest.StatementSummary {
	c.t.Helper()
	args := append([]string{"-o", "json", "statement", "import", "--source", source}, flags...)
	r := c.must(want, append(args, path)...)
	var sums []ingest.StatementSummary
	if err := json.Unmarshal([]byte(r.stdout), &sums); err != nil || len(sums) != 1 {
		c.t.Fatalf("import output is not one summary (%v):\n%v", err, r)
	}
	return sums[0]
}

func (c *cli) lines(source string) int64 {
	return c.count(`SELECT count(*) FROM statement_lines WHERE tenant_id = $1 AND source = $2`, c.tenant, source)
}

// TestBankStatementCorpusThroughTheBinary imports every real camt and MT940
// file of the shared corpus with the binary. An accepted file leaves the
// lines its INDEX.tsv line describes, whose booked credits and debits per
// currency, summed in SQL, equal an independent reading of the file; its
// statements that do not add up are kept with their difference; a second
// import adds nothing. A refused file exits 1 and leaves a rejected run and
// nothing else.
func TestBankStatementCorpusThroughTheBinary(t *testing.T) {
	t.Parallel()
	seen := 0
	for _, kind := range []string{"camt", "mt940"} {
		dir := corpus.Dir(t, kind)
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() || e.Name() == "INDEX.tsv" {
				continue
			}
			seen++
			name := kind + "/" + e.Name()
			path := filepath.Join(dir, e.Name())
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				want, known := bankCorpus[name]
				if !known {
					t.Fatalf("%s is not described in this test: read its INDEX.tsv line and add it", name)
				}
				c := newCLI(t)
				if want.refused {
					sum := c.importStatement(1, "bank", path)
					if sum.Status != "rejected" || sum.RunID == 0 {
						t.Fatalf("summary %+v, want a rejected run", sum)
					}
					if n := c.lines("bank"); n != 0 {
						t.Fatalf("a refused file left %d statement lines", n)
					}
					if n := c.count(`SELECT count(*) FROM statement_balances WHERE tenant_id = $1`, c.tenant); n != 0 {
						t.Fatalf("a refused file left %d statement balances", n)
					}
					if n := c.count(`SELECT count(*) FROM runs WHERE tenant_id = $1 AND id = $2 AND status = 'rejected' AND cardinality(errors) > 0`,
						c.tenant, sum.RunID); n != 1 {
						t.Fatal("no rejected run that says why")
					}
					return
				}
				raw, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				sum := c.importStatement(0, "bank", path)
				if sum.Format != kind || sum.Added != want.lines || sum.Conflicts != 0 {
					t.Fatalf("summary %+v, want %d lines added as %s", sum, want.lines, kind)
				}
				if n := c.lines("bank"); n != want.lines {
					t.Fatalf("%d statement lines, want %d", n, want.lines)
				}
				var independent bankSums
				if kind == "camt" {
					independent = camtSums(t, raw)
				} else {
					independent = mt940Sums(t, raw)
				}
				if got := c.storedSums("bank"); !got.equal(independent) {
					t.Fatalf("stored lines sum to %v; the file to %v", got, independent)
				}
				checkUnbalanced(t, c, "bank", want.unbalanced)
				if len(want.unbalanced) > 0 && len(sum.Warnings) == 0 {
					t.Error("a statement that does not add up left no warning")
				}
				if n := c.count(`SELECT count(*) FROM runs WHERE tenant_id = $1 AND id = $2 AND cardinality(warnings) = $3`,
					c.tenant, sum.RunID, len(sum.Warnings)); n != 1 {
					t.Error("the run does not keep the summary's warnings")
				}
				balances := c.count(`SELECT count(*) FROM statement_balances WHERE tenant_id = $1`, c.tenant)
				// Banks build statement ids from the account number
				// (genkgo's 253EURNL26VAYB8060476890): no IBAN is stored.
				if n := c.count(`SELECT count(*) FROM statement_balances WHERE tenant_id = $1
				  AND (balance_key || statement_id) ~ '[A-Z]{2}[0-9]{2}[A-Z0-9]{4}[0-9]{6,}'`, c.tenant); n != 0 {
					t.Errorf("%d statement balances name an IBAN", n)
				}

				again := c.importStatement(0, "bank", path)
				if again.Added != 0 || again.Duplicates != want.lines || again.Conflicts != 0 {
					t.Fatalf("re-import: %+v, want nothing added and %d duplicates", again, want.lines)
				}
				if n := c.lines("bank"); n != want.lines {
					t.Fatalf("re-import: %d statement lines, want %d", n, want.lines)
				}
				if n := c.count(`SELECT count(*) FROM statement_balances WHERE tenant_id = $1`, c.tenant); n != balances {
					t.Fatalf("re-import: %d statement balances, want %d", n, balances)
				}
				if n := c.postings(); n != 0 {
					t.Fatalf("statement import wrote %d postings", n)
				}
			})
		}
	}
	if seen != len(bankCorpus) {
		t.Errorf("%d corpus files, %d described", seen, len(bankCorpus))
	}
}

// checkUnbalanced compares the differences of a source's statements that
// do not add up with want, in any order.
func checkUnbalanced(t *testing.T, c *cli, source string, want []int64) {
	t.Helper()
	rows, err := c.pool.Query(t.Context(), `
SELECT difference_minor::bigint FROM statement_balances
 WHERE tenant_id = $1 AND source = $2 AND difference_minor <> 0 ORDER BY difference_minor`, c.tenant, source)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for rows.Next() {
		var d int64
		if err := rows.Scan(&d); err != nil {
			t.Fatal(err)
		}
		got = append(got, d)
	}
	rows.Close()
	if fmt.Sprint(got) != fmt.Sprint(want) && !(len(got) == 0 && len(want) == 0) {
		t.Errorf("unbalanced statements by %v, want %v", got, want)
	}
}

var genDay = formats.Date(2026, time.November, 2)

// camtFile generates a camt document of the given message and version.
func camtFile(t *testing.T, c *cli, name string, specs []camt.StatementSpec, msg, version string) string {
	t.Helper()
	var b bytes.Buffer
	err := camt.Generate(&b, specs, camt.GenerateOptions{Message: msg, Version: version, MsgID: "MSG-" + name,
		Created: time.Date(2026, 11, 2, 18, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	return c.file(name, b.Bytes())
}

// specSums is what generated camt statements book, from their specs.
func specSums(specs []camt.StatementSpec) bankSums {
	out := bankSums{}
	for _, s := range specs {
		for _, e := range s.Entries {
			if e.Status != "" && e.Status != "BOOK" {
				continue
			}
			out.add(s.Currency, big.NewInt(e.Amount), e.Direction == formats.Credit)
		}
	}
	return out
}

// TestGeneratedCamtEveryMessageAndVersion imports generated camt.052, .053
// and .054 documents of every version read, with batches and charges: each
// gives the booked sums of the statements it was generated from, and a
// re-import adds nothing.
func TestGeneratedCamtEveryMessageAndVersion(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	specs := camt.RandomStatements(camt.RandomOptions{Seed: 7, Statements: 2, Entries: 12, BatchPercent: 25, ChargesPercent: 30})
	want := specSums(specs)
	for _, msg := range []string{"052", "053", "054"} {
		for v := 2; v <= 13; v++ {
			version := fmt.Sprintf("001.%02d", v)
			source := "gen-" + msg + "-" + version
			path := camtFile(t, c, source+".xml", specs, msg, version)
			sum := c.importStatement(0, source, path)
			if sum.Format != "camt" || sum.Added == 0 || sum.Conflicts != 0 {
				t.Fatalf("camt.%s.%s: %+v", msg, version, sum)
			}
			if got := c.storedSums(source); !got.equal(want) {
				t.Fatalf("camt.%s.%s: lines sum to %v, the statements to %v", msg, version, got, want)
			}
			if again := c.importStatement(0, source, path); again.Added != 0 || again.Duplicates != sum.Added {
				t.Fatalf("camt.%s.%s re-import: %+v", msg, version, again)
			}
		}
	}
}

// TestGeneratedMT940EnvelopesAndLineEndings imports generated MT940
// statements bare and in the block envelope, with LF and CRLF: the same
// lines, under the same keys, every time.
func TestGeneratedMT940EnvelopesAndLineEndings(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	specs := mt940.RandomStatements(mt940.RandomOptions{Seed: 3, Statements: 3, Lines: 9, BlankReferencePercent: 20})
	want := bankSums{}
	var lines int64
	for _, s := range specs {
		for _, l := range s.Lines {
			want.add(s.Currency, big.NewInt(l.Amount), l.Direction == formats.Credit) // RD, a reversed debit, is money in
			lines++
		}
	}
	var keys []string
	for _, o := range []mt940.GenerateOptions{{}, {CRLF: true}, {Envelope: true}, {Envelope: true, CRLF: true}} {
		var b bytes.Buffer
		if err := mt940.Generate(&b, specs, o); err != nil {
			t.Fatal(err)
		}
		source := fmt.Sprintf("mt940-envelope-%t-crlf-%t", o.Envelope, o.CRLF)
		path := c.file(source+".sta", b.Bytes())
		sum := c.importStatement(0, source, path)
		if sum.Format != "mt940" || sum.Added != lines {
			t.Fatalf("%s: %+v, want %d lines", source, sum, lines)
		}
		if got := c.storedSums(source); !got.equal(want) {
			t.Fatalf("%s: lines sum to %v, the statements to %v", source, got, want)
		}
		if again := c.importStatement(0, source, path); again.Added != 0 || again.Duplicates != lines {
			t.Fatalf("%s re-import: %+v", source, again)
		}
		var k string
		if err := c.pool.QueryRow(t.Context(), `SELECT string_agg(line_key, ',' ORDER BY line_key) FROM statement_lines
		 WHERE tenant_id = $1 AND source = $2`, c.tenant, source).Scan(&k); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	for i := range keys {
		if keys[i] != keys[0] {
			t.Errorf("the envelope or line endings changed the keys:\n%s\n%s", keys[0], keys[i])
		}
	}
}

// TestBankStatementMoneyRulesRefuseTheFile breaks a good camt and a good
// MT940 file in each way that touches money: every one is refused whole,
// exit 1, with a rejected run and no line or balance written.
func TestBankStatementMoneyRulesRefuseTheFile(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	var cb, mb bytes.Buffer
	cspecs := camt.RandomStatements(camt.RandomOptions{Seed: 11, Entries: 4})
	if err := camt.Generate(&cb, cspecs, camt.GenerateOptions{MsgID: "M1", Created: genDay}); err != nil {
		t.Fatal(err)
	}
	mspecs := mt940.RandomStatements(mt940.RandomOptions{Seed: 11, Lines: 4})
	if err := mt940.Generate(&mb, mspecs, mt940.GenerateOptions{}); err != nil {
		t.Fatal(err)
	}
	goodCamt, goodMT := cb.String(), mb.String()
	firstAmt := regexp.MustCompile(`<Ntry>\n<Amt Ccy="EUR">(\d+)\.(\d\d)</Amt>`)
	first61 := regexp.MustCompile(`(?m)^:61:2611021102([CD])(\d+),(\d\d)`)
	cases := []struct{ name, body string }{
		{"camt impossible value date", strings.Replace(goodCamt, "<ValDt><Dt>2026-11-02</Dt>", "<ValDt><Dt>2026-02-30</Dt>", 1)},
		{"camt statement without a closing balance", regexp.MustCompile(`<Bal><Tp><CdOrPrtry><Cd>CLBD</Cd>.*</Bal>\n`).ReplaceAllString(goodCamt, "")},
		{"camt amount with three decimals", firstAmt.ReplaceAllString(goodCamt, "<Ntry>\n<Amt Ccy=\"EUR\">$1.${2}5</Amt>")},
		{"camt currency XXX", strings.ReplaceAll(goodCamt, `Ccy="EUR"`, `Ccy="XXX"`)},
		{"camt unknown namespace", strings.Replace(goodCamt, "camt.053.001.08", "camt.053.001.99", 1)},
		{"mt940 impossible value date", strings.Replace(goodMT, ":61:2611021102", ":61:2602301102", 1)},
		{"mt940 statement without a closing balance", regexp.MustCompile(`(?m)^:62F:.*\n`).ReplaceAllString(goodMT, "")},
		{"mt940 amount with three decimals", first61.ReplaceAllString(goodMT, ":61:2611021102$1$2,${3}5")},
		{"mt940 currency XXX", strings.ReplaceAll(goodMT, "EUR", "XXX")},
		{"mt940 second account in one message", strings.Replace(goodMT, ":28C:", ":25:DE02120300000000202051\n:28C:", 1)},
	}
	for i, tc := range cases {
		if tc.body == goodCamt || tc.body == goodMT {
			t.Fatalf("%s: the file was not changed", tc.name)
		}
		source := fmt.Sprintf("broken-%d", i)
		sum := c.importStatement(1, source, c.file(source+".txt", []byte(tc.body)))
		if sum.Status != "rejected" {
			t.Errorf("%s: %+v, want rejected", tc.name, sum)
		}
		if n := c.lines(source); n != 0 {
			t.Errorf("%s: %d lines written", tc.name, n)
		}
		if n := c.count(`SELECT count(*) FROM runs WHERE tenant_id = $1 AND source = $2 AND status = 'rejected'`, c.tenant, source); n != 1 {
			t.Errorf("%s: %d rejected runs, want 1", tc.name, n)
		}
	}
	if n := c.count(`SELECT count(*) FROM statement_balances WHERE tenant_id = $1`, c.tenant); n != 0 {
		t.Errorf("refused files left %d statement balances", n)
	}
	// The good files themselves are imported, so the refusals were the
	// changes' doing.
	c.importStatement(0, "good-camt", c.file("good.xml", []byte(goodCamt)))
	c.importStatement(0, "good-mt940", c.file("good.sta", []byte(goodMT)))
}

// TestCamtEntriesNotBookedAreSkipped imports a statement with pending and
// information entries: they are no lines, and the summary and the run
// count them as skipped.
func TestCamtEntriesNotBookedAreSkipped(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	specs := camt.RandomStatements(camt.RandomOptions{Seed: 5, Entries: 6})
	specs[0].Entries[1].Status = "PDNG"
	specs[0].Entries[4].Status = "INFO"
	// Entries that are not booked are not in the balances either.
	closing := specs[0].Opening
	for _, e := range specs[0].Entries {
		if e.Status != "" {
			continue
		}
		if e.Direction == formats.Credit {
			closing += e.Amount
		} else {
			closing -= e.Amount
		}
	}
	specs[0].Closing = &closing
	sum := c.importStatement(0, "pending", camtFile(t, c, "pending.xml", specs, "052", "001.08"))
	if sum.Added != 4 || sum.Skipped != 2 || sum.Records != 6 {
		t.Fatalf("summary %+v, want 4 lines added and 2 skipped of 6 records", sum)
	}
	if n := c.count(`SELECT skipped FROM runs WHERE tenant_id = $1 AND id = $2`, c.tenant, sum.RunID); n != 2 {
		t.Fatalf("the run counts %d skipped, want 2", n)
	}
	if got, want := c.storedSums("pending"), specSums(specs); !got.equal(want) {
		t.Fatalf("lines sum to %v, the booked entries to %v", got, want)
	}
	checkUnbalanced(t, c, "pending", nil)
}

// TestUnbalancedStatementIsABreakBesideTheBridge imports a camt statement
// whose closing balance is 12.34 EUR more than its opening balance and
// entries make, and an MT940 statement that adds up, under one source:
// reconciliation reports the camt one as a statement_unbalanced break with
// its difference, outside the totals, and the bridge still balances.
func TestUnbalancedStatementIsABreakBesideTheBridge(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	specs := camt.RandomStatements(camt.RandomOptions{Seed: 9, Entries: 5})
	closing := specs[0].Opening + 1234
	for _, e := range specs[0].Entries {
		if e.Direction == formats.Credit {
			closing += e.Amount
		} else {
			closing -= e.Amount
		}
	}
	specs[0].Closing = &closing
	sum := c.importStatement(0, "bank", camtFile(t, c, "unbalanced.xml", specs, "053", "001.02"))
	if len(sum.Warnings) == 0 || !strings.Contains(strings.Join(sum.Warnings, "\n"), "statement_unbalanced") {
		t.Fatalf("no statement_unbalanced warning: %+v", sum)
	}
	var mb bytes.Buffer
	if err := mt940.Generate(&mb, mt940.RandomStatements(mt940.RandomOptions{Seed: 9, Lines: 3}), mt940.GenerateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.importStatement(0, "bank", c.file("balanced.sta", mb.Bytes()))

	r := c.must(3, "-o", "json", "reconcile", "--source", "bank", "--from", "2026-11-01", "--to", "2026-11-03")
	var rep report.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("not a report: %v\n%v", err, r)
	}
	if err := rep.Validate(); err != nil {
		t.Fatalf("the report does not validate: %v", err)
	}
	var unbalanced []report.Discrepancy
	for _, d := range rep.Discrepancies {
		if d.Class == report.ClassStatementUnbalanced {
			unbalanced = append(unbalanced, d)
		}
	}
	if len(unbalanced) != 1 {
		t.Fatalf("%d statement_unbalanced breaks, want 1: %+v", len(unbalanced), rep.Discrepancies)
	}
	d := unbalanced[0]
	// The statement's id embeds no account number here, but banks' ids do:
	// the break names the statement by a token, never by its id.
	if strings.Contains(r.stdout, specs[0].ID) {
		t.Fatalf("the report names the statement by its id %q", specs[0].ID)
	}
	if !d.Break || d.Difference != 1234 || d.Currency != "EUR" || len(d.Reference) != 13 || d.Reference[0] != 's' || d.Ledger != nil ||
		d.Statement == nil || d.Statement.File != "unbalanced.xml" || d.Statement.Amount != closing ||
		!strings.Contains(d.Explanation, "difference 12.34 EUR") {
		t.Fatalf("break %+v (statement %+v)", d, d.Statement)
	}
	for _, b := range rep.Bridge {
		if !b.Unexplained.IsZero() {
			t.Errorf("bridge %s leaves %s unexplained", b.Currency, b.Unexplained)
		}
		for _, dt := range b.Differences {
			if dt.Class == report.ClassStatementUnbalanced {
				t.Errorf("bridge %s sums the unbalanced statement into its totals", b.Currency)
			}
		}
		if b.Currency == "EUR" {
			found := false
			for _, o := range b.OutsideTotals {
				if o.Class == report.ClassStatementUnbalanced && o.Amount.Cmp(money.TotalOf(1234)) == 0 && o.Count == 1 {
					found = true
				}
			}
			if !found {
				t.Errorf("bridge EUR does not show the unbalanced statement outside the totals: %+v", b.OutsideTotals)
			}
		}
	}
	// A period that does not hold the statement's closing date does not
	// report it.
	r = c.run("-o", "json", "reconcile", "--source", "bank", "--from", "2026-11-03", "--to", "2026-11-05")
	if r.code != 0 && r.code != 3 {
		t.Fatalf("want exit 0 or 3\n%v", r)
	}
	if strings.Contains(r.stdout, `"class": "`+report.ClassStatementUnbalanced) {
		t.Fatalf("a statement outside the period is reported:\n%s", r.stdout)
	}
}

// TestRestatedStatementBalancesAreWarnedAbout imports a statement, then the
// same statement with another closing balance, as a bank that re-sends a
// corrected statement does: its lines are duplicates, the first balances
// are kept (rows never change), and the second run says so in a warning
// instead of dropping the new figures silently.
func TestRestatedStatementBalancesAreWarnedAbout(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	specs := camt.RandomStatements(camt.RandomOptions{Seed: 13, Entries: 4})
	first := c.importStatement(0, "bank", camtFile(t, c, "first.xml", specs, "053", "001.08"))
	if len(first.Warnings) != 0 {
		t.Fatalf("warnings on the first import: %v", first.Warnings)
	}
	var closing int64
	if err := c.pool.QueryRow(t.Context(), `SELECT closing_minor FROM statement_balances WHERE tenant_id = $1`, c.tenant).Scan(&closing); err != nil {
		t.Fatal(err)
	}
	restated := closing + 100
	specs[0].Closing = &restated
	again := c.importStatement(0, "bank", camtFile(t, c, "restated.xml", specs, "053", "001.08"))
	if again.Added != 0 || again.Duplicates != first.Added {
		t.Fatalf("re-sent statement: %+v", again)
	}
	if !strings.Contains(strings.Join(again.Warnings, "\n"), "statement_restated") {
		t.Fatalf("no statement_restated warning: %v", again.Warnings)
	}
	if n := c.count(`SELECT count(*) FROM runs WHERE tenant_id = $1 AND id = $2 AND array_to_string(warnings, ' ') LIKE '%statement_restated%'`,
		c.tenant, again.RunID); n != 1 {
		t.Fatal("the run does not keep the warning")
	}
	if n := c.count(`SELECT count(*) FROM statement_balances WHERE tenant_id = $1 AND closing_minor = $2`, c.tenant, closing); n != 1 {
		t.Fatal("the first balances were not kept")
	}
	if n := c.count(`SELECT count(*) FROM statement_balances WHERE tenant_id = $1`, c.tenant); n != 1 {
		t.Fatalf("%d statement balances, want 1", n)
	}
}
