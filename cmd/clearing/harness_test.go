package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clearing-dev/clearing/ingest"
	"github.com/clearing-dev/clearing/internal/pgtest"
)

// clearingBin is the real binary, built once for the package's tests: the
// integration tests run it as a user would and then read the ledger.
var clearingBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "clearing-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	clearingBin = filepath.Join(dir, "clearing")
	if out, err := exec.Command("go", "build", "-o", clearingBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building clearing: %v\n%s", err, out)
		os.Exit(1)
	}
	code := pgtest.Run(m)
	os.RemoveAll(dir)
	os.Exit(code)
}

// doubleApply is the test mode in which every ingest, statement import and
// approval of the integration suite runs twice: whatever the suite asserts
// about the ledger must hold when everything arrives again.
var doubleApply = os.Getenv("CLEARING_TEST_DOUBLE_APPLY") == "1"

// cli runs the clearing binary against one test's own database.
type cli struct {
	t      *testing.T
	url    string
	tenant string
	dir    string
	env    []string
	pool   *pgxpool.Pool
}

func newCLI(t *testing.T) *cli {
	t.Helper()
	url := pgtest.ConnString(t)
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return &cli{t: t, url: url, tenant: "default", dir: t.TempDir(), pool: pool}
}

// result is what one run of the binary did.
type result struct {
	args   []string
	stdout string
	stderr string
	code   int
}

func (r result) String() string {
	return fmt.Sprintf("clearing %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), r.code, r.stdout, r.stderr)
}

// exec runs the binary once and waits for it.
func (c *cli) exec(args ...string) result {
	c.t.Helper()
	r, _ := c.start(args...).wait(c.t)
	return r
}

// run runs the binary. In double-apply mode a command that applies
// something runs a second time, which must succeed too (exit 0 or 3); the
// first run's result is returned, so assertions about what a command
// printed still hold.
func (c *cli) run(args ...string) result {
	c.t.Helper()
	r := c.exec(args...)
	if doubleApply && applies(args) && (r.code == 0 || r.code == 3) {
		again := c.exec(args...)
		// The second approval of a correction that needs two operators is
		// refused for being the same operator: that refusal is the point.
		refused := again.code == 1 && strings.Contains(again.stderr, "different operator")
		if again.code != 0 && again.code != 3 && !refused {
			c.t.Fatalf("double apply: the second run failed:\n%v", again)
		}
	}
	return r
}

// applies reports whether a command line writes to the ledger or the
// statement side.
func applies(args []string) bool {
	line := " " + strings.Join(args, " ") + " "
	for _, cmd := range []string{" ingest ", " statement import ", " corrections approve ", " quarantine release ", " quarantine dismiss "} {
		if strings.Contains(line, cmd) && !strings.Contains(line, " --dry-run ") {
			return true
		}
	}
	return false
}

// must runs the binary and fails the test unless it exits with want.
func (c *cli) must(want int, args ...string) result {
	c.t.Helper()
	r := c.run(args...)
	if r.code != want {
		c.t.Fatalf("want exit %d\n%v", want, r)
	}
	return r
}

// file writes data to a file in the test's directory and returns its path.
func (c *cli) file(name string, data []byte) string {
	c.t.Helper()
	p := filepath.Join(c.dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		c.t.Fatal(err)
	}
	return p
}

// ingestSummary is the JSON summary of one file, as the command prints it.
type ingestSummary = ingest.Summary

// ingest runs 'clearing ingest -o json' on files, checks the exit code
// (want -1 accepts 0 and 3) and returns the summaries.
func (c *cli) ingest(want int, args ...string) []ingestSummary {
	c.t.Helper()
	r := c.run(append([]string{"-o", "json", "ingest"}, args...)...)
	if (want >= 0 && r.code != want) || (want < 0 && r.code != 0 && r.code != 3) {
		c.t.Fatalf("want exit %d\n%v", want, r)
	}
	var sums []ingestSummary
	if err := json.Unmarshal([]byte(r.stdout), &sums); err != nil {
		c.t.Fatalf("ingest output is not JSON: %v\n%v", err, r)
	}
	return sums
}

// count runs a counting query against the test's database.
func (c *cli) count(sql string, args ...any) int64 {
	c.t.Helper()
	var n int64
	if err := c.pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		c.t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// postings is the number of postings of the test's tenant.
func (c *cli) postings() int64 {
	return c.count(`SELECT count(*) FROM postings WHERE tenant_id = $1`, c.tenant)
}

// balance is an account's balance (credits minus debits) from the legs.
func (c *cli) balance(account string) int64 {
	return c.count(`SELECT coalesce(sum(CASE direction WHEN 'C' THEN amount_minor ELSE -amount_minor END), 0)
	                  FROM legs WHERE tenant_id = $1 AND account = $2`, c.tenant, account)
}

// tenantID turns a test's readable name for a tenant ("clean returns",
// "corpus-ppd-mixedDebitCredit.ach") into a tenant id that clearing accepts:
// lower case, with every other character replaced by '-'.
func tenantID(name string) string {
	id := []byte(strings.ToLower(name))
	for i, b := range id {
		if (b < 'a' || b > 'z') && (b < '0' || b > '9') && b != '.' && b != '_' && b != '-' {
			id[i] = '-'
		}
	}
	if len(id) == 0 || id[0] == '.' || id[0] == '_' || id[0] == '-' {
		id = append([]byte("t"), id...)
	}
	return string(id[:min(len(id), 63)])
}

func mustPool(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}
