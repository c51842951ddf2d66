package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// readmeChain reads the README's end-to-end block: the sh block after the
// "<!-- readme-chain -->" marker, one command line each, with an optional
// "# exit N" comment (0 otherwise) and "> FILE" redirection of stdout.
type chainStep struct {
	args []string
	out  string // file that stdout goes to; "" for none
	exit int
}

var exitComment = regexp.MustCompile(`#\s*exit (\d+)`)

func readmeChain(t *testing.T) []chainStep {
	t.Helper()
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(raw), "<!-- readme-chain -->\n```sh\n")
	if !ok {
		t.Fatal("README has no readme-chain block")
	}
	block, _, _ = strings.Cut(block, "```")
	var steps []chainStep
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		var s chainStep
		if m := exitComment.FindStringSubmatch(line); m != nil {
			s.exit, _ = strconv.Atoi(m[1])
		}
		line, _, _ = strings.Cut(line, "#")
		line, s.out, _ = strings.Cut(line, ">")
		s.out = strings.TrimSpace(s.out)
		words := strings.Fields(line)
		if len(words) < 2 || words[0] != "clearing" || strings.ContainsAny(line, `'"$|;&`) {
			t.Fatalf("README chain line %q is not a plain clearing command this test can run", line)
		}
		s.args = words[1:]
		steps = append(steps, s)
	}
	return steps
}

// README's "A day, end to end" runs as it stands, in an empty folder,
// against an empty tenant, with the exits it says, and leaves the ledger,
// the statement and the breaks that its text describes.
func TestReadmeChainRuns(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	steps := readmeChain(t)
	if len(steps) < 5 {
		t.Fatalf("the README chain has %d commands", len(steps))
	}
	for _, s := range steps {
		cmd := exec.Command(clearingBin, append([]string{"--tenant", c.tenant}, s.args...)...)
		cmd.Dir = c.dir
		cmd.Env = append(os.Environ(), "CLEARING_DATABASE_URL="+c.url, "CLEARING_PII_KEY=test-key")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		r := result{args: s.args, stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
		if r.code != s.exit {
			t.Fatalf("README says exit %d\n%v", s.exit, r)
		}
		if s.out != "" {
			if err := os.WriteFile(filepath.Join(c.dir, s.out), stdout.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, q := range []struct {
		what string
		sql  string
		want int64
	}{
		{"postings (385 posted)", `SELECT count(*) FROM postings WHERE tenant_id = $1`, 385},
		{"postings of the one originator", `SELECT count(*) FROM postings WHERE tenant_id = $1 AND posting_key LIKE 'ach:1111111111:%'`, 385},
		{"audit events of duplicates or conflicts", `SELECT count(*) FROM audit_events WHERE tenant_id = $1 AND verdict IN ('duplicate', 'conflict')`, 0},
		{"statement lines", `SELECT count(*) FROM statement_lines WHERE tenant_id = $1 AND source = 'ach'`, 185},
		{"open breaks", `SELECT count(*) FROM breaks WHERE tenant_id = $1 AND status = 'open'`, 10},
		{"missing_in_statement breaks of entries 191 to 200", `SELECT count(*) FROM breaks WHERE tenant_id = $1 AND class = 'missing_in_statement'
		   AND item_key BETWEEN 'ach:1111111111:2026-03-02:121042880000191' AND 'ach:1111111111:2026-03-02:121042880000200'`, 10},
		{"in_transit items", `SELECT count(*) FROM discrepancies WHERE tenant_id = $1 AND class = 'in_transit'`, 190},
	} {
		if n := c.count(q.sql, c.tenant); n != q.want {
			t.Errorf("%s: %d, want %d", q.what, n, q.want)
		}
	}
	// The bridge: ledger minus statement is the sum of the classes'
	// differences.
	if n := c.count(`SELECT count(*) FROM reconciliation_totals t WHERE tenant_id = $1
	                   AND ledger_total - statement_total <> (SELECT sum(ledger_amount - statement_amount) FROM reconciliation_classes k
	                                                           WHERE k.tenant_id = t.tenant_id AND k.run_id = t.run_id AND k.currency = t.currency)`, c.tenant); n != 0 {
		t.Errorf("%d currencies with an unexplained remainder", n)
	}
	html, err := os.ReadFile(filepath.Join(c.dir, "recon.html"))
	if err != nil || !bytes.Contains(html, []byte("missing_in_statement")) {
		t.Fatalf("recon.html: %v, %d bytes without the breaks' class", err, len(html))
	}
}
