package main

import (
	"bytes"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/jackc/pgx/v5"

	"github.com/clearing-dev/clearing/internal/output"
	"github.com/clearing-dev/clearing/internal/pgtest"
)

// The scenarios in ../../testdata are the product's stories told as
// transcripts: commands as an operator types them, each followed by what
// clearing answered and what the ledger then holds. The file format and the
// directives are described in docs/decisions/testdata-scenarios.md;
// 'go test ./cmd/clearing -run TestScenarios -rewrite' writes the answers
// anew.

// scenarioCommands are the clearing commands a scenario may run as
// directives: the directive line is the command line.
var scenarioCommands = []string{"ingest", "statement", "reconcile", "corrections", "lookup", "runs", "config",
	"balance", "ledger", "report"}

func TestScenarios(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scenarios in ../../testdata")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			t.Parallel()
			s := &scenario{c: newCLI(t)}
			datadriven.RunTest(t, f, s.directive)
		})
	}
}

// scenario is one transcript's state: a database of its own, and the
// directory its files are written to.
type scenario struct {
	c *cli
}

func (s *scenario) directive(t *testing.T, d *datadriven.TestData) string {
	var out string
	switch {
	case d.Cmd == "generate":
		out = s.generate(t, d)
	case d.Cmd == "file":
		var name string
		d.ScanArgs(t, "name", &name)
		s.c.file(name, []byte(d.Input))
		return ""
	case d.Cmd == "sql":
		out = s.sql(t, d.Input)
	case slices.Contains(scenarioCommands, d.Cmd):
		out = s.command(t, d)
	default:
		d.Fatalf(t, "unknown directive %q", d.Cmd)
	}
	s.checkOrdinalIDs(t)
	return normalise(out, s.c.dir)
}

// command runs the directive line as a clearing command line, in the
// scenario's directory, so that the files it names are the ones the
// scenario wrote and are printed as the operator typed them. Each word is
// one argument, and key=value (or key=(several words)) is the single
// argument "key=value", as cobra reads --flag=value. Three words belong to
// the runner, not to clearing: as=NAME runs the command as NAME's own
// approver login (four eyes counts logins); correction=KEY stands for the
// id of the correction with that key, which the database assigns; and
// quiet leaves stdout out (the exit code, and stderr on an error, stay),
// for a step whose effect the sql after it shows better than its output.
//
// The command runs once, like cli.exec and unlike cli.run: a transcript
// shows what one run printed, and a scenario that claims something of a
// second run says so with a second directive. CLEARING_TEST_DOUBLE_APPLY
// therefore changes nothing here.
func (s *scenario) command(t *testing.T, d *datadriven.TestData) string {
	c := s.c
	args := []string{d.Cmd}
	quiet := false
	for _, a := range d.CmdArgs {
		switch {
		case a.Key == "quiet" && len(a.Vals) == 0:
			quiet = true
		case a.Key == "as":
			c = approverCLI(s.c, a.SingleVal(t))
		case a.Key == "correction":
			args = append(args, strconv.FormatInt(s.correctionID(t, a.SingleVal(t)), 10))
		case len(a.Vals) == 0:
			args = append(args, a.Key)
		default:
			args = append(args, a.Key+"="+strings.Join(a.Vals, ", "))
		}
	}
	r := s.exec(t, c, args)
	if slices.Equal(args, []string{"ledger", "verify"}) && pgtest.Citus(t) {
		r.stdout = withoutDistributionCheck(t, r.stdout)
	}
	out := fmt.Sprintf("exit %d\n", r.code)
	if !quiet {
		out += r.stdout
	}
	if r.code != 0 && r.code != 3 {
		// An error is told on stderr; a command that succeeded only logs
		// there, and its logs are not the transcript.
		out += "stderr:\n" + r.stderr
	}
	return out
}

// checkDistributed is the check that ledger verify adds on Citus only.
const checkDistributed = "every tenant table is distributed by tenant_id, co-located, with its triggers on every shard"

// withoutDistributionCheck takes the row of the check that ledger verify
// adds on Citus out of its table, after making sure the check is there and
// passed, and draws the table again without it: a transcript is what
// clearing prints on one PostgreSQL, and holds on Citus but for that check.
// The table is read back cell by cell and drawn with the command's own
// table writer, which must give back what the command printed.
func withoutDistributionCheck(t *testing.T, stdout string) string {
	t.Helper()
	lines := strings.SplitAfter(stdout, "\n")
	first := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "+-") })
	if first < 0 {
		t.Fatalf("ledger verify printed no table:\n%s", stdout)
	}
	var all, kept output.Rows
	for _, l := range lines[first:] {
		if !strings.HasPrefix(l, "|") {
			continue
		}
		cells := strings.Split(strings.TrimSuffix(strings.TrimSpace(l), "|"), "|")[1:]
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case all.Header == nil:
			all.Header, kept.Header = cells, cells
			continue
		case cells[0] == checkDistributed:
			if len(cells) < 3 || cells[1] != "true" || cells[2] != "0" {
				t.Errorf("on Citus, ledger verify fails its distribution check: %q", cells)
			}
		default:
			kept.Add(cells...)
		}
		all.Add(cells...)
	}
	if len(kept.Rows) == len(all.Rows) {
		t.Fatalf("on Citus, ledger verify has no check %q:\n%s", checkDistributed, stdout)
	}
	var again, without strings.Builder
	if err := output.WriteTable(&again, all); err != nil {
		t.Fatal(err)
	}
	if table := strings.Join(lines[first:], ""); again.String() != table {
		t.Fatalf("the verify table does not read back as it was printed:\n%s\ndrawn again:\n%s", table, again.String())
	}
	if err := output.WriteTable(&without, kept); err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines[:first], "") + without.String()
}

// exec runs the binary once as cli.start does (c's tenant, database URL
// and environment), but in the scenario's directory, and waits for it.
func (s *scenario) exec(t *testing.T, c *cli, args []string) result {
	cmd := exec.Command(clearingBin, append([]string{"--tenant", c.tenant}, args...)...)
	cmd.Dir = s.c.dir
	cmd.Env = append(os.Environ(), "CLEARING_DATABASE_URL="+c.url, "CLEARING_PII_KEY=test-key")
	cmd.Env = append(cmd.Env, c.env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("running clearing: %v", err)
	}
	return result{args: args, stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
}

func (s *scenario) correctionID(t *testing.T, key string) int64 {
	var id int64
	if err := s.c.pool.QueryRow(context.Background(),
		`SELECT id FROM corrections WHERE tenant_id = $1 AND correction_key = $2`, s.c.tenant, key).Scan(&id); err != nil {
		t.Fatalf("correction %s: %v", key, err)
	}
	return id
}

// sql runs one read-only query, with the scenario's tenant as $1, and
// prints its rows under a header of column names, in aligned columns.
func (s *scenario) sql(t *testing.T, query string) string {
	ctx := context.Background()
	var b bytes.Buffer
	err := pgx.BeginTxFunc(ctx, s.c.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, query, s.c.tenant)
		if err != nil {
			return err
		}
		defer rows.Close()
		w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		var names []string
		for _, f := range rows.FieldDescriptions() {
			names = append(names, f.Name)
		}
		fmt.Fprintln(w, strings.Join(names, "\t"))
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				return err
			}
			cells := make([]string, len(vals))
			for i, v := range vals {
				cells[i] = sqlCell(v)
			}
			fmt.Fprintln(w, strings.Join(cells, "\t"))
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return w.Flush()
	})
	if err != nil {
		t.Fatalf("sql: %v\n%s", err, query)
	}
	return b.String()
}

// sqlCell renders one value: NULL, an empty string as "", a date without
// its clock, bytes in hex.
func sqlCell(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case driver.Valuer: // numeric, and the other types pgx gives as structs
		dv, err := v.Value()
		if err != nil {
			return fmt.Sprintf("<%v>", err)
		}
		return sqlCell(dv)
	case string:
		if v == "" {
			return `""`
		}
		return v
	case time.Time:
		if v.Equal(v.Truncate(24 * time.Hour)) {
			return v.Format("2006-01-02")
		}
		return v.UTC().Format(time.RFC3339Nano)
	case []byte:
		return fmt.Sprintf("%x", v)
	default:
		return fmt.Sprint(v)
	}
}

// checkOrdinalIDs fails the scenario when the ids of its runs,
// reconciliations or corrections are not 1, 2, 3, ...: the transcripts
// print them unchanged, as a fresh database numbers them, because "run 2"
// says which run a duplicate collided with. A change that makes the
// database skip ids (a sequence value spent on a retried insert) must then
// teach normalise to renumber them rather than let the transcripts drift.
func (s *scenario) checkOrdinalIDs(t *testing.T) {
	for _, table := range []string{"runs", "reconciliations", "corrections"} {
		n := s.c.count(`SELECT count(*) FROM (SELECT id, row_number() OVER (ORDER BY id) AS ordinal FROM `+table+`
		                 WHERE tenant_id = $1) ids WHERE id <> ordinal`, s.c.tenant)
		if n != 0 {
			t.Fatalf("%d %s have ids that are not their ordinals: renumber them in normalise", n, table)
		}
	}
}

// normalisers replace what differs from one run of a scenario to the next,
// and only that; everything else a command prints is the transcript. They
// are applied in order to every directive's output.
var normalisers = []struct {
	re   *regexp.Regexp
	with string
}{
	// Clock times, as RFC 3339 in JSON and as "2006-01-02 15:04:05" in
	// tables, become "YYYY-MM-DD hh:mm:ss" of the same width, so that
	// tables stay aligned; fractions of a second, whose width varies, go.
	// Plain dates are value dates and stay.
	{regexp.MustCompile(`\d{4}-\d\d-\d\d([T ])\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d| UTC)?`), "YYYY-MM-DD${1}hh:mm:ss${3}"},
	// Durations, which clearing names *_seconds.
	{regexp.MustCompile(`("?[a-z_]*_seconds"?[=:] ?)[0-9.e-]+`), "${1}<seconds>"},
}

// normalise rewrites out with the normalisers, and the scenario's
// directory as $DIR. It is the one place that decides what a transcript
// may leave out.
func normalise(out, dir string) string {
	out = strings.ReplaceAll(out, dir, "$DIR")
	for _, n := range normalisers {
		out = n.re.ReplaceAllString(out, n.with)
	}
	return out
}
