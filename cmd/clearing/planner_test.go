package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/clearing-dev/clearing/internal/pgtest"
)

// postingsTuplesRead is how many rows of postings the database has read,
// by scan or index. A backend reports its counters as it exits, so this
// first waits for the clearing processes' backends to leave.
func (c *cli) postingsTuplesRead() int64 {
	c.t.Helper()
	c.waitForClientsToLeave()
	if pgtest.Citus(c.t) {
		// On Citus the rows are read on the workers, from the shards.
		time.Sleep(time.Second)
		return c.count(`SELECT coalesce(sum(result::bigint), 0) FROM run_command_on_placements('postings',
		                  $$SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) FROM pg_stat_user_tables WHERE relid = '%s'::regclass$$)`)
	}
	return c.count(`SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)
	                  FROM pg_stat_user_tables WHERE relname = 'postings'`)
}

// A tenant the planner's statistics do not know yet looks to it like a
// handful of rows; a lookup that could enter an index by tenant alone then
// walked every posting of the tenant once per record. The work the database
// does must stay proportional to the file, which the rows it reads show
// without timing anything (docs/decisions/tenant-unknown-to-the-planner.md).
func TestIngestForATenantTheStatisticsDoNotKnowStaysLinear(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	const records = 20000
	iso, ach := filepath.Join(c.dir, "day.ipm"), filepath.Join(c.dir, "day.ach")
	c.must(0, "generate", "iso8583", "--messages", "20000", "--out", iso)
	c.must(0, "generate", "ach", "--entries", "20000", "--out", ach)
	// The generated ISO file holds reversals without an original, which
	// are quarantined: exit 3.
	files := []struct {
		exit int
		args []string
	}{{3, []string{"--format", "iso8583", iso}}, {0, []string{ach}}}

	c.tenant = "known"
	for _, f := range files {
		c.ingest(f.exit, f.args...)
	}
	if _, err := c.pool.Exec(context.Background(), `ANALYZE postings`); err != nil {
		t.Fatal(err)
	}

	c.tenant = "new"
	for _, f := range files {
		for _, step := range []string{"ingest", "re-ingest"} {
			before := c.postingsTuplesRead()
			s := c.ingest(f.exit, f.args...)[0]
			read := c.postingsTuplesRead() - before
			t.Logf("%s of %s for a tenant unknown to the statistics: %d postings rows read for %d records",
				step, s.Format, read, records)
			if s.Records != records || (step == "ingest") != (s.Posted > 0) {
				t.Fatalf("%s: %+v", step, s)
			}
			// Each record reads a few postings: its own key, its original's.
			// Walking the tenant per record reads hundreds of millions.
			if read > 20*records {
				t.Fatalf("%s of %s read %d rows of postings for %d records: a lookup walks the tenant",
					step, s.Format, read, records)
			}
		}
	}
	if c.count(`SELECT count(*) FROM postings WHERE tenant_id = 'new'`) != c.count(`SELECT count(*) FROM postings WHERE tenant_id = 'known'`) {
		t.Fatal("the two tenants' ledgers differ")
	}
}
