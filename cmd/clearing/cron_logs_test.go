package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats/ach"
	"github.com/clearing-dev/clearing/internal/report"
)

// jsonLines parses every line of a command's stderr as one JSON object,
// failing the test on any other line.
func jsonLines(t *testing.T, r result) []map[string]any {
	t.Helper()
	var events []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n") {
		if line == "" && r.stderr == "" {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("a line on stderr is not JSON: %q\n%v", line, r)
		}
		for k, v := range ev {
			if _, isNumber := v.(float64); isNumber && (k == "took" || k == "duration") {
				t.Errorf("%q has no unit in its name: %v", k, ev)
			}
		}
		events = append(events, ev)
	}
	return events
}

// summaryEvents returns the events named msg, failing unless there are
// want of them.
func summaryEvents(t *testing.T, r result, msg string, want int) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, ev := range jsonLines(t, r) {
		if ev["msg"] == msg {
			if ev["level"] != "INFO" {
				t.Errorf("%s at %v, want INFO", msg, ev["level"])
			}
			if d, ok := ev["duration_seconds"].(float64); !ok || d < 0 {
				t.Errorf("%s without a duration in seconds: %v", msg, ev)
			}
			out = append(out, ev)
		}
	}
	if len(out) != want {
		t.Fatalf("%d %q events, want %d\n%v", len(out), msg, want, r)
	}
	return out
}

// assertFields checks that ev holds want's values (numbers as JSON has them).
func assertFields(t *testing.T, ev map[string]any, want map[string]any) {
	t.Helper()
	for k, w := range want {
		if n, ok := w.(int); ok {
			w = float64(n)
		}
		if ev[k] != w {
			t.Errorf("%s: %s = %v, want %v\n%v", ev["msg"], k, ev[k], w, ev)
		}
	}
}

// With --log-format json a cron job reads every line of stderr as JSON,
// errors and rejected files included (they were plain text between JSON
// lines), and finds one INFO summary event for each file ingested or
// imported and for each reconciliation, with its counts and its exit code.
func TestCronLogsAreJSONWithOneSummaryEach(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	es := liveOnly(entries(14, 12))
	good := c.achFile("day.ach", ach.DefaultHeader(created), es)
	bad := c.file("bad.ach", []byte("101 this is not an ACH file\n"))
	js := func(want int, args ...string) result {
		t.Helper()
		return c.must(want, append([]string{"--log-format", "json", "-o", "json"}, args...)...)
	}

	r := js(exitError, "ingest", "--format", "ach", good, bad)
	var sums []ingestSummary
	if err := json.Unmarshal([]byte(r.stdout), &sums); err != nil || len(sums) != 2 {
		t.Fatalf("ingest output: %v\n%v", err, r)
	}
	ing := summaryEvents(t, r, "ingest summary", 2)
	assertFields(t, ing[0], map[string]any{"file": good, "status": "done", "run_id": int(sums[0].RunID),
		"records": len(es), "posted": len(es), "duplicates": 0, "conflicts": 0, "quarantined": 0, "exit_code": exitOK})
	assertFields(t, ing[1], map[string]any{"file": bad, "status": "rejected", "posted": 0, "exit_code": exitError})
	if n := c.count(`SELECT posted FROM runs WHERE tenant_id = $1 AND id = $2`, c.tenant, sums[0].RunID); n != int64(len(es)) {
		t.Errorf("run %d posted %d, the summary says %d", sums[0].RunID, n, len(es))
	}
	var rejected, failed int
	for _, ev := range jsonLines(t, r) {
		switch ev["msg"] {
		case "file rejected":
			rejected++
			if ev["file"] != bad || ev["level"] != "ERROR" {
				t.Errorf("rejection event %v", ev)
			}
		case "command failed":
			failed++
			assertFields(t, ev, map[string]any{"level": "ERROR", "exit_code": exitError})
		}
	}
	if rejected != 1 || failed != 1 {
		t.Errorf("%d rejection and %d failure events, want 1 each\n%v", rejected, failed, r)
	}

	again := js(exitOK, "ingest", good)
	assertFields(t, summaryEvents(t, again, "ingest summary", 1)[0],
		map[string]any{"records": len(es), "posted": 0, "duplicates": len(es), "exit_code": exitOK})

	lines := make([]stmtLine, len(es))
	for i, e := range es {
		lines[i] = lineOf(e)
	}
	lines[0].amount++ // one amount_mismatch: the reconciliation needs a person
	mapping := c.file("map.toml", []byte(statementMapping))
	stmt := c.statement("stmt.csv", lines)
	imp := js(exitOK, "statement", "import", "--source", "ach", "--format", "csv", "--map", mapping, stmt)
	assertFields(t, summaryEvents(t, imp, "statement import summary", 1)[0], map[string]any{"file": stmt, "source": "ach",
		"status": "done", "records": len(es), "added": len(es), "duplicates": 0, "conflicts": 0, "exit_code": exitOK})

	day := es[0].EffectiveDate.Format("2006-01-02")
	rec := js(exitAttention, "reconcile", "--source", "ach", "--from", day, "--to", day)
	ev := summaryEvents(t, rec, "reconcile summary", 1)[0]
	assertFields(t, ev, map[string]any{"source": "ach", "from": day, "to": day, "ledger_items": len(es),
		"statement_lines": len(es), "matched_ledger": len(es) - 1, "breaks": 2, "empty_side": "", "exit_code": exitAttention})
	if n := c.count(`SELECT count(*) FROM reconciliations WHERE tenant_id = $1 AND id = $2 AND ledger_items = $3`, c.tenant, int64(ev["run_id"].(float64)), len(es)); n != 1 {
		t.Errorf("the summary names run %v, which is not stored", ev["run_id"])
	}

	// A period with nothing on either side is a reconciliation too.
	quiet := js(exitOK, "reconcile", "--source", "ach", "--from", "2020-01-01", "--to", "2020-01-01")
	assertFields(t, summaryEvents(t, quiet, "reconcile summary", 1)[0], map[string]any{"ledger_items": 0,
		"statement_lines": 0, "breaks": 0, "empty_side": report.EmptyBoth, "exit_code": exitOK})

	// A usage error, found before logging was set up, is JSON too.
	usage := c.must(exitUsage, "--log-format", "json", "ingest", "--format", "nacha", good)
	for _, ev := range jsonLines(t, usage) {
		assertFields(t, ev, map[string]any{"msg": "command failed", "exit_code": exitUsage})
	}
	if usage.stderr == "" {
		t.Error("a usage error logged nothing")
	}
}
