package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/internal/money"
	"github.com/clearing-dev/clearing/internal/output"
)

func render(t testing.TB, format string, r *Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, format, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestBannerComesFirst holds the loudest line in its place: the first line
// of the table and the first element of the page when a bridge does not
// balance, and nowhere when every bridge does.
func TestBannerComesFirst(t *testing.T) {
	const banner = "UNEXPLAINED DIFFERENCE: 1.00 USD. Every discrepancy must be classified; this report does not balance."
	full := render(t, output.Table, fullReport())
	if first, _, _ := strings.Cut(full, "\n"); first != banner {
		t.Errorf("first line of the table is %q, want %q", first, banner)
	}
	if !strings.Contains(full, "UNEXPLAINED DIFFERENCE IN USD: 1.00 USD") || !strings.Contains(full, "| UNEXPLAINED: DOES NOT BALANCE | 1.00 USD ") {
		t.Errorf("the table does not repeat the banner at the USD bridge:\n%s", full)
	}
	page := render(t, HTML, fullReport())
	_, body, _ := strings.Cut(page, "<body>")
	if !strings.HasPrefix(strings.TrimSpace(body), `<div class="banner" role="alert">`+banner+`</div>`) {
		t.Errorf("the page does not open with the banner:\n%.400s", body)
	}
	for _, f := range []string{output.Table, HTML} {
		if out := render(t, f, balancedReport()); strings.Contains(strings.ToUpper(out), "UNEXPLAINED DIFFERENCE") {
			t.Errorf("%s of a balanced report shows the banner", f)
		}
	}
}

// TestCSVIsOutputWriteCSV holds the streaming writer to the same bytes as
// output.WriteCSV over the same cells, so that formula neutralisation and
// quoting cannot drift apart.
func TestCSVIsOutputWriteCSV(t *testing.T) {
	r := fullReport()
	rows := output.Rows{Header: csvHeader}
	for i := range r.Discrepancies {
		rows.Add(csvFields(nil, strconv.FormatInt(r.RunID, 10), r, &r.Discrepancies[i])...)
	}
	var want bytes.Buffer
	if err := output.WriteCSV(&want, rows); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := WriteWith(&got, output.CSV, r, CSVOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Fatalf("streamed CSV differs from output.WriteCSV:\n%s\nwant:\n%s", got.String(), want.String())
	}
}

func TestCSVRows(t *testing.T) {
	r := fullReport()
	var all bytes.Buffer
	if err := WriteWith(&all, output.CSV, r, CSVOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&all).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(r.Discrepancies)+1 {
		t.Fatalf("%d CSV records, want a header and %d rows", len(recs), len(r.Discrepancies))
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	cases := []struct {
		name   string
		row    int
		column string
		want   string
	}{
		{"negative minor units stay numbers", 5, "difference_minor", "-120000"},
		{"negative major units stay numbers", 5, "difference", "-1200.00"},
		{"an absent side has empty cells", 5, "ledger_key", ""},
		{"an absent side has no line", 5, "ledger_line", ""},
		{"statement amount in minor units", 5, "statement_amount_minor", "120000"},
		{"statement amount in major units", 5, "statement_amount", "1200.00"},
		{"JPY has no decimals", 15, "ledger_amount", "12000"},
		{"unknown currency keeps minor units and leaves major empty", 9, "statement_currency", "EUR"},
		{"break flag", 5, "break", "yes"},
		{"explained flag", 1, "break", "no"},
		{"an open break needs a person", 5, "needs_person", "yes"},
		{"an acknowledged break is a break", 8, "break", "yes"},
		{"an acknowledged break needs no one", 8, "needs_person", "no"},
		{"acknowledged", 8, "acknowledged", "yes"},
		{"a rejected correction says so", 8, "correction_status", "rejected"},
		{"who rejected it", 8, "rejected_by", "alice"},
		{"why", 8, "rejection_reason", "the bank confirmed 120.00; the ledger is right"},
		{"first seen", 5, "first_seen", "2026-12-01"},
		{"age", 8, "age_days", "9"},
		{"an explained item has no age", 1, "age_days", ""},
		{"a reference of digits stays text", 5, "reference", "'091000010000005"},
		{"a reference of digits and letters is as it is", 12, "reference", "FEE-2026-11"},
		{"a key is as it is", 5, "statement_key", "bai2:021000021:acct-7f3a9c:2026-11-02:091000010000005"},
		{"a value date stays a date", 5, "statement_value_date", "2026-11-10"},
		{"hostile text is kept verbatim", 8, "explanation", `Statement says: <script>alert("paid")</script> 120.00 USD against a posting of 125.00 USD.`},
		{"run id on every row", 16, "run_id", "42"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			i, ok := col[tc.column]
			if !ok {
				t.Fatalf("no column %q", tc.column)
			}
			if got := recs[tc.row][i]; got != tc.want {
				t.Errorf("row %d %s = %q, want %q", tc.row, tc.column, got, tc.want)
			}
		})
	}
}

// TestJSONSchema checks the fields that docs/report.md promises by their
// JSON names, and that the document reads back into an equal Report.
func TestJSONSchema(t *testing.T) {
	r := fullReport()
	out := render(t, output.JSON, r)
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"run_id", "tenant", "source", "from", "to", "window_days", "tolerance_minor",
		"statement_last_date", "created_at", "ledger_items", "statement_lines", "matched_ledger", "matched_statement",
		"classes", "bridge", "discrepancies"} {
		if _, ok := doc[k]; !ok {
			t.Errorf("document lacks %q", k)
		}
	}
	bridge := doc["bridge"].([]any)[0].(map[string]any)
	for _, k := range []string{"currency", "ledger_total", "statement_total", "differences", "unexplained", "auditor"} {
		if _, ok := bridge[k]; !ok {
			t.Errorf("bridge lacks %q", k)
		}
	}
	auditor := bridge["auditor"].(map[string]any)
	for _, k := range []string{"ledger_balance", "open", "acknowledged", "explained", "within_tolerance", "unexplained", "statement_balance"} {
		if _, ok := auditor[k]; !ok {
			t.Errorf("auditor's bridge lacks %q", k)
		}
	}
	d := doc["discrepancies"].([]any)[7].(map[string]any)
	for _, k := range []string{"class", "reason", "explanation", "reference", "currency", "ledger", "statement",
		"difference", "correction_key", "break"} {
		if _, ok := d[k]; !ok {
			t.Errorf("discrepancy lacks %q", k)
		}
	}
	for _, k := range []string{"key", "kind", "file", "line", "amount", "currency", "value_date"} {
		if _, ok := d["ledger"].(map[string]any)[k]; !ok {
			t.Errorf("side lacks %q", k)
		}
	}
	if strings.Contains(out, "<script>") {
		t.Error("JSON carries a raw <script>; encoding/json should escape it")
	}
	var back Report
	if err := json.Unmarshal([]byte(out), &back); err != nil {
		t.Fatal(err)
	}
	want := *r
	want.BreakAges = tallied(t, r).ages // filled on the way out, as is each auditor's form
	want.Bridge = append([]Bridge(nil), r.Bridge...)
	for i := range want.Bridge {
		want.Bridge[i].Auditor = auditorOf(r, tallied(t, r), i)
	}
	if !reflect.DeepEqual(back, want) {
		t.Errorf("the document does not read back into the same report")
	}
}

func TestJSONEmptyListsAreArrays(t *testing.T) {
	r := emptyReport()
	r.Classes = nil
	r.Bridge = []Bridge{{Currency: "USD"}}
	out := render(t, output.JSON, r)
	for _, want := range []string{`"classes": []`, `"discrepancies": []`, `"differences": []`} {
		if !strings.Contains(out, want) {
			t.Errorf("JSON lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "null") {
		t.Errorf("JSON has a null list:\n%s", out)
	}
}

func TestHTMLEscapesHostileText(t *testing.T) {
	page := render(t, HTML, fullReport())
	if strings.Contains(page, "<script") {
		t.Error("the page contains a <script")
	}
	if !strings.Contains(page, "Statement says: &lt;script&gt;alert(&#34;paid&#34;)&lt;/script&gt; 120.00 USD") {
		t.Error("the hostile explanation is not shown escaped")
	}
	if !strings.Contains(page, `acme-2026-11\x1b[2J.bai2`) || strings.Contains(page, "\x1b") {
		t.Error("the escape sequence in a file name is not shown as text")
	}
	if !strings.Contains(page, `0910000100\u200b00006`) || strings.Contains(page, "\u200b") {
		t.Error("the zero-width space in a key is not shown as text")
	}
}

// TestHTMLSelfContained refuses anything that would make the page fetch
// or run something: it must open the same from a mail attachment.
func TestHTMLSelfContained(t *testing.T) {
	for _, fx := range fixtures {
		page := strings.ToLower(render(t, HTML, fx.build()))
		for _, bad := range []string{"<script", "<link", "<img", "<iframe", "<object", "<embed", "@import", "@font-face",
			"url(", "http:", "https:", "src=", "href=", "javascript:", " on"} {
			if bad == " on" {
				if m := regexp.MustCompile(` on[a-z]+=`).FindString(page); m != "" {
					t.Errorf("%s: the page has an event handler %q", fx.name, m)
				}
				continue
			}
			if strings.Contains(page, bad) {
				t.Errorf("%s: the page contains %q", fx.name, bad)
			}
		}
	}
}

// TestListingCap renders more breaks than MaxListedBreaks and checks that
// the table and the page list exactly the cap, every class keeps rows, the
// page says how many are left out, and CSV and JSON keep every row.
func TestListingCap(t *testing.T) {
	const n = 12345
	r := largeReport(n)
	omitted := n - MaxListedBreaks
	page := render(t, HTML, r)
	if got := strings.Count(page, "<tr><td class=\"key\">"); got != MaxListedBreaks {
		t.Errorf("the page lists %d breaks, want %d", got, MaxListedBreaks)
	}
	if !strings.Contains(page, fmt.Sprintf("%d breaks are not listed on this page", omitted)) {
		t.Error("the page does not say how many breaks it left out")
	}
	table := render(t, output.Table, r)
	if got := strings.Count(table, "| correction key "); got != MaxListedBreaks {
		t.Errorf("the table lists %d breaks, want %d", got, MaxListedBreaks)
	}
	if !strings.Contains(table, fmt.Sprintf("%d breaks are not listed here", omitted)) {
		t.Error("the table does not say how many breaks it left out")
	}
	for _, c := range classTable {
		if c.Break && !regexp.MustCompile(`(?m)^`+c.Code+`: \d+ breaks, \d+ listed`).MatchString(table) {
			t.Errorf("the table has no capped listing for %s", c.Code)
		}
	}
	if got := strings.Count(render(t, output.CSV, r), "\n"); got != n+1 {
		t.Errorf("CSV has %d lines, want %d", got, n+1)
	}
	var back Report
	if err := json.Unmarshal([]byte(render(t, output.JSON, r)), &back); err != nil || len(back.Discrepancies) != n {
		t.Errorf("JSON has %d discrepancies (%v), want %d", len(back.Discrepancies), err, n)
	}
}

func TestShare(t *testing.T) {
	cases := []struct {
		name   string
		totals []int
		limit  int
		want   []int
	}{
		{"under the limit", []int{3, 0, 4}, 10, []int{3, 0, 4}},
		{"at the limit", []int{5, 5}, 10, []int{5, 5}},
		{"one class floods", []int{2, 1000, 3}, 10, []int{2, 5, 3}},
		{"all flood", []int{100, 100, 100}, 10, []int{4, 3, 3}},
		{"small class keeps its rows", []int{1, 50, 50}, 11, []int{1, 5, 5}},
		{"nothing", []int{0, 0}, 10, []int{0, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := share(tc.totals, tc.limit); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("share(%v, %d) = %v, want %v", tc.totals, tc.limit, got, tc.want)
			}
		})
	}
	// Properties over many shapes: never above a total, never above the
	// limit, and the limit is reached whenever the totals reach it.
	for seed := 1; seed < 2000; seed++ {
		totals := make([]int, len(classTable))
		sum := 0
		for i := range totals {
			totals[i] = (seed * (i + 7) * 2654435761) % 97 % (seed%13 + 1)
			sum += totals[i]
		}
		limit := seed % 40
		got, n := share(totals, limit), 0
		for i, a := range got {
			if a < 0 || a > totals[i] {
				t.Fatalf("share(%v, %d) = %v: allotment outside 0..total", totals, limit, got)
			}
			n += a
		}
		if n != min(sum, limit) {
			t.Fatalf("share(%v, %d) = %v lists %d, want %d", totals, limit, got, n, min(sum, limit))
		}
	}
}

func TestPrintable(t *testing.T) {
	long := strings.Repeat("a", maxTextRunes+50)
	cases := []struct{ name, in, want string }{
		{"plain", "ach:123:2026-11-02:0910", "ach:123:2026-11-02:0910"},
		{"terminal escape", "a\x1b[2Jb", `a\x1b[2Jb`},
		{"newline and tab", "a\nb\tc", `a\nb\tc`},
		{"bidirectional override", "abc\u202edcba", `abc\u202edcba`},
		{"zero-width space", "09100\u200b01", `09100\u200b01`},
		{"line separator", "a\u2028b", `a\u2028b`},
		{"C1 control", "a\u0085b", `a\u0085b`},
		{"invalid UTF-8", "a\xffb", `a\xffb`},
		{"accents stay", "Société Générale", "Société Générale"},
		{"cut when long", long, strings.Repeat("a", maxTextRunes) + "...[50 more bytes]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := printable(tc.in); got != tc.want {
				t.Errorf("printable(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestWrap(t *testing.T) {
	cases := []struct {
		name, in string
		width    int
		want     string
	}{
		{"fits", "one two", 10, "one two"},
		{"breaks at spaces", "one two three four", 9, "one two\nthree\nfour"},
		{"cuts a long word", "abcdefghij xy", 4, "abcd\nefgh\nij\nxy"},
		{"counts runes, not bytes", "ééééé ééé", 5, "ééééé\nééé"},
		{"collapses spaces", "  a   b  ", 10, "a b"},
		{"empty", "", 10, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := wrap(tc.in, tc.width); got != tc.want {
				t.Errorf("wrap(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
			}
		})
	}
}

// TestTableIsReadable keeps the terminal form ASCII-only (apart from text
// that came from the data) and within a width that mail shows whole.
func TestTableIsReadable(t *testing.T) {
	for _, fx := range fixtures {
		for i, line := range strings.Split(render(t, output.Table, fx.build()), "\n") {
			if len(line) > 120 {
				t.Errorf("%s line %d is %d wide: %s", fx.name, i+1, len(line), line)
			}
			for _, r := range line {
				if r > 127 {
					t.Errorf("%s line %d has %q: %s", fx.name, i+1, r, line)
				}
			}
		}
	}
}

// TestClassTableMatchesDocs keeps the class table in docs/report.md in
// step with classTable: same codes, order, names, meanings and break flags.
func TestClassTableMatchesDocs(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| ([^|]+) \\| (yes|no) \\| (.+?) \\|$")
	var got []Class
	for _, m := range re.FindAllStringSubmatch(string(raw), -1) {
		got = append(got, Class{Code: m[1], Name: m[2], Break: m[3] == "yes", Meaning: m[4]})
	}
	if !reflect.DeepEqual(got, classTable) {
		t.Errorf("docs/report.md class table:\n%v\nwant:\n%v", got, classTable)
	}
}

// TestJSONIsOutputWriteJSON holds the streaming writer to the bytes that
// output.WriteJSON writes for the same document.
func TestJSONIsOutputWriteJSON(t *testing.T) {
	cases := map[string]*Report{"full": fullReport(), "balanced": balancedReport(), "empty": emptyReport(), "large": largeReport(2000)}
	for name, r := range cases {
		t.Run(name, func(t *testing.T) {
			var want bytes.Buffer
			if err := output.WriteJSON(&want, jsonDoc(r, tallied(t, r))); err != nil {
				t.Fatal(err)
			}
			if got := render(t, output.JSON, r); got != want.String() {
				t.Fatalf("streamed JSON differs from output.WriteJSON:\n%s\nwant:\n%s", got, want.String())
			}
		})
	}
}

func TestAmount(t *testing.T) {
	cases := []struct {
		name  string
		minor int64
		code  string
		want  string
	}{
		{"cents", -1250, "USD", "-12.50 USD"},
		{"no minor unit", 5000, "JPY", "5000 JPY"},
		{"three decimals", 1250, "BHD", "1.250 BHD"},
		{"unknown code stays in minor units", 1234, "XXY", "1234 (minor units) XXY"},
		{"hostile code is made printable", 1, "\x1b[", `1 (minor units) \x1b[`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := amount(tc.minor, tc.code); got != tc.want {
				t.Errorf("amount(%d, %q) = %q, want %q", tc.minor, tc.code, got, tc.want)
			}
		})
	}
}

func TestChartBars(t *testing.T) {
	row := make([]chartCell, len(classTable))
	row[classIndex[ClassMissingInLedger]] = chartCell{count: 3, abs: money.TotalOf(1 << 62)}
	row[classIndex[ClassAmountMismatch]] = chartCell{count: 1, abs: money.TotalOf(1 << 61)}
	row[classIndex[ClassUnbookedFee]] = chartCell{count: 2}
	ch, ok := chartFor("USD", row)
	if !ok {
		t.Fatal("no chart")
	}
	want := []struct {
		class string
		width int
	}{{ClassMissingInLedger, chartBarMax}, {ClassAmountMismatch, chartBarMax / 2}, {ClassUnbookedFee, 2}}
	if len(ch.Bars) != len(want) {
		t.Fatalf("%d bars, want %d", len(ch.Bars), len(want))
	}
	for i, w := range want {
		if b := ch.Bars[i]; b.Class != w.class || b.Width != w.width {
			t.Errorf("bar %d is %s %d wide, want %s %d", i, b.Class, b.Width, w.class, w.width)
		}
	}
	if _, ok := chartFor("USD", make([]chartCell, len(classTable))); ok {
		t.Error("a currency without breaks has a chart")
	}
}

// TestChartSumBeyondInt64 guards the page of a run with many large breaks:
// the chart's sums passed int64 and the page could not be written.
func TestChartSumBeyondInt64(t *testing.T) {
	r := fullReport()
	r.Discrepancies[4].Difference = math.MinInt64 + 1
	r.Discrepancies[5].Difference = math.MinInt64 + 1
	var b bytes.Buffer
	if err := Write(&b, HTML, r); err != nil {
		t.Fatalf("Write = %v", err)
	}
	// Both are missing_in_ledger breaks in USD: 2 x (2^63 - 1) cents.
	if want := "2 breaks, 184,467,440,737,095,516.14 USD"; !strings.Contains(b.String(), want) {
		t.Fatalf("the page does not show %q", want)
	}
}

// TestDocsExample decodes the example document in docs/report.md strictly
// and validates it, so the example cannot drift from the schema.
func TestDocsExample(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), "### Example")
	_, rest, ok2 := strings.Cut(rest, "```json\n")
	example, _, ok3 := strings.Cut(rest, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/report.md has no JSON example under ### Example")
	}
	dec := json.NewDecoder(strings.NewReader(example))
	dec.DisallowUnknownFields()
	var r Report
	if err := dec.Decode(&r); err != nil {
		t.Fatal(err)
	}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(r.Discrepancies) != 2 || !r.Bridge[0].Unexplained.IsZero() {
		t.Errorf("the example is not the balanced run with two discrepancies the text describes")
	}
}

// TestCSVListsBreaksByDefault: the CSV a person works through has one row
// per break, acknowledged ones included; CSVOptions.All adds the rest.
func TestCSVListsBreaksByDefault(t *testing.T) {
	r := fullReport()
	recs, err := csv.NewReader(strings.NewReader(render(t, output.CSV, r))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	breaks := 0
	for _, d := range r.Discrepancies {
		if d.Break {
			breaks++
		}
	}
	if len(recs) != breaks+1 || breaks == len(r.Discrepancies) {
		t.Fatalf("%d CSV records, want a header and the %d breaks of %d discrepancies", len(recs), breaks, len(r.Discrepancies))
	}
	for _, rec := range recs[1:] {
		if rec[3] != "yes" {
			t.Errorf("a row that is not a break: %v", rec)
		}
	}
}

// TestNumberLike pins which identifiers the CSV keeps as text: those a
// spreadsheet would turn into a number, a date or a time.
func TestNumberLike(t *testing.T) {
	for s, want := range map[string]bool{
		"091000010000005": true, "121043000000001234": true, "42": true, "-7": true, "+7": true, " 12 ": true,
		"1.5": true, "1,5": true, "1e5": true, "1.2E+14": true, "12%": true,
		"2026-11-02": true, "11/02": true, "12:30": true, "1.2.3": true,
		"": false, "FEE-2026-11": false, "ach:1234567890:2026-11-02:091000010000004": false, "1-2-3-4": false,
		"12--3": false, "-": false, "e5": false, "1e": false, "0x1F": false, "R01": false, "1 2": false, "2026-11-02T00": false,
	} {
		if got := numberLike(s); got != want {
			t.Errorf("numberLike(%q) = %t, want %t", s, got, want)
		}
	}
	if got := keepText("091000010000005"); got != "'091000010000005" {
		t.Errorf("keepText = %q", got)
	}
	// A would-be formula is neutralised once, by SafeCell, not twice.
	if got := output.SafeCell(keepText("-12")); got != "'-12" {
		t.Errorf("SafeCell(keepText(-12)) = %q", got)
	}
}
