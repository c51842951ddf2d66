package report

import (
	"context"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// findChromium returns the browser's path. Without one the test is
// skipped, except under CI=true, where the page must be proven in a real
// browser and a missing one fails.
func findChromium(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is required under CI=true (Debian: apt-get install chromium)")
	}
	t.Skip("chromium not found at /usr/bin/chromium or on PATH; install it (Debian: apt-get install chromium) to run this test")
	return ""
}

// dumpDOM opens the page in headless Chromium and returns the document as
// the browser parsed it. --dump-dom is used rather than printing to PDF and
// extracting the text: the DOM shows whether markup in the data became an
// element, which text extracted from a PDF cannot tell, and it needs no
// other package.
func dumpDOM(t *testing.T, browser, page string) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu",
		"--disable-dev-shm-usage", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--user-data-dir="+filepath.Join(dir, "profile"),
		"--dump-dom", "file://"+path)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || len(out) == 0 {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	return string(out)
}

var (
	styleElement = regexp.MustCompile(`(?s)<style>.*?</style>`)
	anyTag       = regexp.MustCompile(`<[^>]*>`)
	spaces       = regexp.MustCompile(`\s+`)
	keyPart      = regexp.MustCompile(`<span class="part">([^<]*)</span>|<wbr>`)
)

// pageText is the text a reader sees: the DOM without its style sheet and
// tags, entities decoded, runs of white space made one space. The parts of
// a key, and the line breaks allowed between them, are the key's text.
func pageText(dom string) string {
	s := keyPart.ReplaceAllString(dom, "$1")
	s = anyTag.ReplaceAllString(styleElement.ReplaceAllString(s, " "), " ")
	return strings.TrimSpace(spaces.ReplaceAllString(html.UnescapeString(s), " "))
}

func TestHTMLInChromium(t *testing.T) {
	browser := findChromium(t)
	cases := []struct {
		name string
		r    *Report
		want []string
	}{
		{"full", fullReport(), []string{
			// The verdict, the breaks by class and the bridge come first.
			"UNEXPLAINED DIFFERENCE: 1.00 USD. Every discrepancy must be classified; this report does not balance. Reconciliation run 42",
			"2026-11-30 10 breaks need a person, worth 1,353.00 USD and 6,000 JPY (the sum of their differences, either sign); 1 acknowledged break needs no one; unexplained remainder 1.00 USD: the report does not balance. Breaks by class",
			"Missing in the ledger missing_in_ledger USD 2 0 1,245.50 USD -1,245.50 USD 1,245.50 USD",
			"Amounts differ amount_mismatch USD 0 1 5.00 USD 5.00 USD -5.00 USD",
			"Ledger balance 50,000.00 USD -50,000.00 USD + open breaks: need a person 7 1,118.00 USD -1,118.00 USD + acknowledged breaks 1 -5.00 USD 5.00 USD",
			"+ UNEXPLAINED -1.00 USD 1.00 USD = Statement balance 50,876.99 USD -50,876.99 USD",
			"Ledger total 50,000.00 USD Statement total 50,876.99 USD Ledger minus statement -876.99 USD",
			"Outside the totals Difference Items Settlement total differs settlement_total_mismatch 10.00 USD 1",
			"Settlement total differs settlement_total_mismatch 1 break, 10.00 USD",
			"Missing in the ledger missing_in_ledger -1,245.50 USD 2",
			"UNEXPLAINED DIFFERENCE IN USD: 1.00 USD",
			"UNEXPLAINED: DOES NOT BALANCE 1.00 USD",
			"Ledger total 20,000 JPY Statement total 11,000 JPY Ledger minus statement 9,000 JPY",
			"Unexplained (balances) 0 JPY",
			"Missing in the ledger missing_in_ledger 2 breaks, 1,245.50 USD",
			"Missing on the statement missing_in_statement 1 break, 5,000 JPY",
			// A heading's code is an element of its own: " :" is the tag's gap.
			"Missing in the ledger missing_in_ledger : 2 breaks", "Missing on the statement missing_in_statement : 2 breaks",
			"Amounts differ amount_mismatch : 2 breaks", "Currencies differ currency_mismatch : 1 break",
			"Dates too far apart date_out_of_window : 1 break", "Duplicate on the statement duplicate_in_statement : 1 break",
			"Fee not booked unbooked_fee : 1 break", "Settlement total differs settlement_total_mismatch : 1 break",
			"The statement has a credit of 1200.00 USD that the ledger does not have.",
			"1,200.00 USD bank -1,200.00 -1,200.00 USD bank 1,200.00",
			`Statement says: <script>alert("paid")</script> 120.00 USD against a posting of 125.00 USD.`,
			"091000010000008 first seen 2026-11-22, 9 days old acknowledged",
			"Correction rejected by alice on 2026-11-29: the bank confirmed 120.00; the ledger is right",
			`acme-2026-11\x1b[2J.bai2`,
			"Class Items In transit in_transit 2 Returned returned 1 Corrected corrected 1 Matched matched 1",
		}},
		{"empty", emptyReport(), []string{
			"NOTHING TO COMPARE: neither ledger postings nor statement lines of source ach:odfi-1 from 2026-11-01 to 2026-11-30. Reconciliation run 44",
			"Balanced: every difference is explained and no break needs a person; nothing unexplained. Breaks by class No breaks. Bridge",
			"No currencies compared.", "Breaks by class and amount No breaks.", "Breaks No breaks.",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dom := dumpDOM(t, browser, render(t, HTML, tc.r))
			// The hostile explanation must arrive as text: a <script
			// anywhere in the parsed document is an element.
			if strings.Contains(strings.ToLower(dom), "<script") {
				t.Fatalf("the parsed page has a script element:\n%s", dom)
			}
			text := pageText(dom)
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("the page text lacks %q", w)
				}
			}
			if t.Failed() {
				t.Logf("page text:\n%s", text)
			}
		})
	}
}
