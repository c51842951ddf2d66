package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/clearing-dev/clearing/formats/ach"
)

// readMetrics parses a metrics file as node_exporter's textfile collector
// would, with the Prometheus text parser.
func readMetrics(t *testing.T, path string) map[string]*dto.MetricFamily {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(f)
	if err != nil {
		t.Fatalf("%s is not Prometheus text format: %v", path, err)
	}
	return mfs
}

// sample is the value of the one series of name whose labels include
// want; it fails the test when there is not exactly one.
func sample(t *testing.T, mfs map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	t.Helper()
	mf, ok := mfs[name]
	if !ok {
		t.Fatalf("no metric %s", name)
	}
	var found []float64
	for _, m := range mf.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			match = match && labels[k] == v
		}
		if !match {
			continue
		}
		switch {
		case m.GetCounter() != nil:
			found = append(found, m.GetCounter().GetValue())
		case m.GetGauge() != nil:
			found = append(found, m.GetGauge().GetValue())
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s%v: want one series, found %d", name, want, len(found))
	}
	return found[0]
}

// The metrics runs use exec, not run: in double-apply mode a second run
// would rewrite the file with the second run's counts.
func TestMetricsFileOfTheNightlyJobMatchesTheLedger(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	dir := filepath.Join(c.dir, "textfile")
	es := entries(71, 200)
	day := c.achFile("day.ach", ach.DefaultHeader(created), es)

	// Ingest: the file's verdicts are what the ledger holds.
	ingestProm := filepath.Join(dir, "ingest.prom")
	before := float64(time.Now().Unix())
	if r := c.exec("ingest", "--metrics-file", ingestProm, day); r.code != 0 {
		t.Fatalf("want exit 0\n%v", r)
	}
	mfs := readMetrics(t, ingestProm)
	file := map[string]string{"command": "ingest", "file": "day.ach", "source": "ach", "format": "ach"}
	verdict := func(v string) map[string]string {
		l := map[string]string{"verdict": v}
		for k, x := range file {
			l[k] = x
		}
		return l
	}
	posted := c.count(`SELECT count(*) FROM postings WHERE tenant_id = $1 AND kind = 'clearing'`, c.tenant)
	notices := c.count(`SELECT count(*) FROM notices WHERE tenant_id = $1`, c.tenant)
	if posted == 0 || notices == 0 {
		t.Fatalf("the fixture should post entries and record prenotes: %d postings, %d notices", posted, notices)
	}
	for v, want := range map[string]int64{"posted": posted, "notice": notices, "duplicate": 0, "conflict": 0, "quarantined": 0, "rejected": 0} {
		if got := sample(t, mfs, "clearing_records_total", verdict(v)); got != float64(want) {
			t.Errorf("verdict %s: metrics say %v, the ledger %d", v, got, want)
		}
	}
	if got := sample(t, mfs, "clearing_file_records", file); got != float64(len(es)) {
		t.Errorf("records: %v, want %d", got, len(es))
	}
	if got := sample(t, mfs, "clearing_unique_violations_total", map[string]string{"command": "ingest"}); got != 0 {
		t.Errorf("unique violations: %v", got)
	}
	if got := sample(t, mfs, "clearing_insert_fallbacks_total", map[string]string{"command": "ingest"}); got != 0 {
		t.Errorf("a new file fell back to ON CONFLICT %v times", got)
	}
	last := sample(t, mfs, "clearing_last_success_timestamp_seconds", map[string]string{"command": "ingest"})
	if last < before-1 || last > float64(time.Now().Unix())+1 {
		t.Errorf("last success %v is not the run's time", last)
	}
	if d := sample(t, mfs, "clearing_duration_seconds", map[string]string{"command": "ingest"}); d <= 0 {
		t.Errorf("duration %v", d)
	}

	// The same file again: every posting is a duplicate, audited.
	if r := c.exec("ingest", "--metrics-file", ingestProm, day); r.code != 0 {
		t.Fatalf("want exit 0\n%v", r)
	}
	mfs = readMetrics(t, ingestProm)
	audited := c.count(`SELECT count(*) FROM audit_events WHERE tenant_id = $1 AND verdict = 'duplicate'`, c.tenant)
	if got := sample(t, mfs, "clearing_records_total", verdict("duplicate")); audited == 0 || got != float64(audited) {
		t.Errorf("duplicates: metrics say %v, the audit trail %d", got, audited)
	}
	if got := sample(t, mfs, "clearing_records_total", verdict("posted")); got != 0 {
		t.Errorf("a re-sent file posted %v", got)
	}

	// A file that overlaps the ledger: its first chunk's plain INSERT meets
	// a posted key and falls back to ON CONFLICT, which is counted apart
	// from the violations that reach the command.
	o := newCLI(t)
	if r := o.exec("ingest", o.achFile("part.ach", ach.DefaultHeader(created), es[:120])); r.code != 0 {
		t.Fatalf("want exit 0\n%v", r)
	}
	overlapProm := filepath.Join(dir, "overlap.prom")
	if r := o.exec("ingest", "--metrics-file", overlapProm, o.achFile("whole.ach", ach.DefaultHeader(created), es)); r.code != 0 {
		t.Fatalf("want exit 0\n%v", r)
	}
	mfs = readMetrics(t, overlapProm)
	if got := sample(t, mfs, "clearing_insert_fallbacks_total", map[string]string{"command": "ingest"}); got != 1 {
		t.Errorf("fallbacks to ON CONFLICT: %v, want 1", got)
	}
	if got := sample(t, mfs, "clearing_unique_violations_total", map[string]string{"command": "ingest"}); got != 0 {
		t.Errorf("unique violations: %v", got)
	}
	whole := o.count(`SELECT count(*) FROM postings WHERE tenant_id = $1 AND kind = 'clearing'`, o.tenant)
	if whole != posted {
		t.Errorf("the two files posted %d entries, the one file %d", whole, posted)
	}

	// A failed run keeps the time of the last success and says how it
	// ended.
	if r := c.exec("ingest", "--metrics-file", ingestProm, c.file("bad.ach", []byte("not ach\n"))); r.code != 1 {
		t.Fatalf("want exit 1\n%v", r)
	}
	mfs = readMetrics(t, ingestProm)
	if got := sample(t, mfs, "clearing_last_success_timestamp_seconds", map[string]string{"command": "ingest"}); got < last {
		t.Errorf("a failed run moved the last success from %v to %v", last, got)
	}
	if got := sample(t, mfs, "clearing_exit_code", map[string]string{"command": "ingest"}); got != 1 {
		t.Errorf("exit code %v", got)
	}
	if got := sample(t, mfs, "clearing_files", map[string]string{"command": "ingest", "status": "rejected"}); got != 1 {
		t.Errorf("rejected files %v", got)
	}

	// Statement import and reconcile of a ledger and statement that differ.
	r := newCLI(t)
	p := plant(t, r)
	importProm := filepath.Join(dir, "statement.prom")
	if res := r.exec("statement", "import", "--source", "ach", "--format", "csv", "--map", p.mapping, "--metrics-file", importProm, p.stmt); res.code != 0 {
		t.Fatalf("want exit 0\n%v", res)
	}
	mfs = readMetrics(t, importProm)
	lines := r.count(`SELECT count(*) FROM statement_lines WHERE tenant_id = $1`, r.tenant)
	stmt := map[string]string{"command": "statement_import", "file": "statement.csv", "source": "ach", "format": "csv", "verdict": "added"}
	if got := sample(t, mfs, "clearing_records_total", stmt); lines == 0 || got != float64(lines) {
		t.Errorf("statement lines added: metrics say %v, the table %d", got, lines)
	}

	reconProm := filepath.Join(dir, "reconcile.prom")
	from, to := p.period()
	rep := r.exec("-o", "json", "reconcile", "--source", "ach", "--from", from, "--to", to, "--metrics-file", reconProm)
	if rep.code != 3 {
		t.Fatalf("want exit 3\n%v", rep)
	}
	mfs = readMetrics(t, reconProm)
	rows, err := r.pool.Query(t.Context(), `SELECT class, status, count(*) FROM breaks WHERE tenant_id = $1 AND status <> 'closed' GROUP BY 1, 2`, r.tenant)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var class, status string
		var want int64
		if err := rows.Scan(&class, &status, &want); err != nil {
			t.Fatal(err)
		}
		n++
		labels := map[string]string{"command": "reconcile", "source": "ach", "class": class, "status": status}
		if got := sample(t, mfs, "clearing_breaks", labels); got != float64(want) {
			t.Errorf("breaks %s %s: metrics say %v, the inventory %d", class, status, got, want)
		}
		if age := sample(t, mfs, "clearing_breaks_oldest_age_seconds", labels); age < 0 || age > 600 {
			t.Errorf("oldest %s break is %v s old", class, age)
		}
	}
	if rows.Err() != nil || n == 0 {
		t.Fatalf("the planted reconciliation should leave breaks (%v)", rows.Err())
	}
	if got := len(mfs["clearing_breaks"].GetMetric()); got != n {
		t.Errorf("metrics list %d break series, the inventory %d", got, n)
	}
	proposed := r.count(`SELECT count(*) FROM corrections WHERE tenant_id = $1 AND status = 'proposed'`, r.tenant)
	if got := sample(t, mfs, "clearing_corrections_awaiting_approval", map[string]string{"command": "reconcile", "status": "proposed"}); proposed == 0 || got != float64(proposed) {
		t.Errorf("corrections proposed: metrics say %v, the table %d", got, proposed)
	}
	if got := sample(t, mfs, "clearing_reconcile_unexplained_minor", map[string]string{"currency": "USD"}); got != 0 {
		t.Errorf("unexplained USD %v; the planted differences are all explained", got)
	}
	if !strings.Contains(rep.stdout, `"run_id"`) {
		t.Errorf("reconcile printed no report:\n%v", rep)
	}
}
