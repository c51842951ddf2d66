package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/clearing-dev/clearing/formats/registry"
)

// The independent check measures ingest against the very posting rows it
// wrote rather than against rows the bench builds from the file: after
// each ingest, the tenant's postings are exported as they are stored and
// COPYed, untouched, into a table made with LIKE postings INCLUDING ALL
// (every column, default, identity, check constraint and index; no
// triggers). The figures are ratios of wall time, since both write the
// same postings: COPY's time over the whole 'clearing ingest' process's
// time, for the new file and for its re-ingest, and 'clearing reconcile'
// against the bare join of the same tables.
const checkTable = "bench_check_copy"

// checkRun is one run of the check.
type checkRun struct {
	first, again ran
	copyTook     time.Duration
	postings     int64
	reconcile    reconcileRun
}

// measureCheck generates the ACH file and its statement, then measures
// b.runs runs of the check, each under a tenant of its own.
func (b *bench) measureCheck(ctx context.Context) error {
	in := inputs{ach: b.path("entries.ach"), statement: b.path("statement.csv"), mapping: b.path("statement.toml")}
	p, err := b.generateACH(ctx, b.n, in)
	if err != nil {
		return err
	}
	var runs []checkRun
	for run := 1; run <= b.runs; run++ {
		cr, err := b.checkRun(ctx, in, p, run)
		if err != nil {
			return err
		}
		runs = append(runs, cr)
	}
	b.reportCheck(runs, p)
	return nil
}

// generateACH writes an ACH file of n entries, and its statement with
// planted breaks, and the statement's mapping.
func (b *bench) generateACH(ctx context.Context, n int, in inputs) (planted, error) {
	r, err := b.clearing(ctx, []int{0}, "", "generate", "ach", "--entries", strconv.Itoa(n), "--seed", "1", "--out", in.ach)
	if err != nil {
		return planted{}, err
	}
	st, err := os.Stat(in.ach)
	if err != nil {
		return planted{}, err
	}
	b.addDetail("generate ACH file, "+count(int64(n))+" entries", fmt.Sprintf("%s, %.1f MiB, peak RSS %.0f MiB",
		seconds(r.wall), float64(st.Size())/(1<<20), r.rssMiB()))
	stmt, err := newStatementWriter(in.statement)
	if err != nil {
		return planted{}, err
	}
	err = eachRecord(in.ach, registry.Options{Format: registry.ACH, Allowed: []string{registry.ACH}}, stmt.add)
	p, cerr := stmt.close()
	if err == nil {
		err = cerr
	}
	if err == nil {
		err = os.WriteFile(in.mapping, []byte(statementMapping), 0o644)
	}
	return p, err
}

// checkRun ingests the file under a new tenant and again, COPYs the
// postings the first ingest wrote, and reconciles the tenant next to the
// bare join.
func (b *bench) checkRun(ctx context.Context, in inputs, p planted, run int) (checkRun, error) {
	var cr checkRun
	tenant := b.tenant("check-" + strconv.Itoa(run))
	args := []string{"ingest", "-o", "json", "--tenant", tenant, "--format", registry.ACH, in.ach}
	var err error
	b.srv.checkpoint(ctx)
	if cr.first, err = b.clearing(ctx, []int{0}, "", args...); err != nil {
		return cr, err
	}
	sum, err := checkIngest(cr.first, int64(b.n), false)
	if err != nil {
		return cr, err
	}
	b.srv.checkpoint(ctx)
	if cr.again, err = b.clearing(ctx, []int{0}, "", args...); err != nil {
		return cr, err
	}
	if _, err := checkIngest(cr.again, int64(b.n), true); err != nil {
		return cr, err
	}
	if cr.postings, cr.copyTook, err = b.copyStored(ctx, tenant); err != nil {
		return cr, err
	}
	if cr.postings != sum.Posted {
		return cr, fmt.Errorf("the tenant holds %d postings; its ingest posted %d", cr.postings, sum.Posted)
	}
	if cr.reconcile, err = b.measureReconcile(ctx, in, tenant, sum.Posted, p, run); err != nil {
		return cr, err
	}
	fmt.Fprintf(b.out, "  run %d: ingest %s, re-ingest %s, COPY of its %s postings %s\n", run,
		seconds(cr.first.wall), seconds(cr.again.wall), count(cr.postings), seconds(cr.copyTook))
	return cr, nil
}

// copyStored exports the tenant's postings as stored (text COPY, in id
// order) to a file, then times a COPY of that file into a fresh table LIKE
// postings INCLUDING ALL. COPY writes an identity column's given values,
// so the rows arrive exactly as ingest wrote them. It returns the rows
// and the time of the COPY alone.
func (b *bench) copyStored(ctx context.Context, tenant string) (int64, time.Duration, error) {
	path := b.path("postings.copy")
	defer os.Remove(path)
	f, err := os.Create(path)
	if err != nil {
		return 0, 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	conn, err := b.srv.pool.Acquire(ctx)
	if err != nil {
		f.Close()
		return 0, 0, err
	}
	defer conn.Release()
	literal := "'" + strings.ReplaceAll(tenant, "'", "''") + "'"
	_, err = conn.Conn().PgConn().CopyTo(ctx, w, `COPY (SELECT * FROM postings WHERE tenant_id = `+literal+` ORDER BY id) TO STDOUT`)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, 0, fmt.Errorf("export the postings of %s: %w", tenant, err)
	}
	if _, err := conn.Exec(ctx, `DROP TABLE IF EXISTS `+checkTable+`; CREATE TABLE `+checkTable+` (LIKE postings INCLUDING ALL)`); err != nil {
		return 0, 0, fmt.Errorf("create %s: %w", checkTable, err)
	}
	defer b.srv.pool.Exec(context.WithoutCancel(ctx), `DROP TABLE IF EXISTS `+checkTable) //nolint:errcheck // best effort
	if err := checkBaselineKey(ctx, b, checkTable); err != nil {
		return 0, 0, err
	}
	in, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer in.Close()
	b.srv.checkpoint(ctx)
	began := time.Now()
	tag, err := conn.Conn().PgConn().CopyFrom(ctx, bufio.NewReaderSize(in, 1<<20), `COPY `+checkTable+` FROM STDIN`)
	took := time.Since(began)
	if err != nil {
		return 0, 0, fmt.Errorf("COPY into %s: %w", checkTable, err)
	}
	// The copy must be the stored rows themselves, not rows like them.
	var differ int64
	err = conn.QueryRow(ctx, `SELECT count(*) FROM (SELECT * FROM `+checkTable+`
    EXCEPT ALL SELECT * FROM postings WHERE tenant_id = $1) d`, tenant).Scan(&differ)
	if err != nil || differ != 0 {
		return 0, 0, fmt.Errorf("%s holds %d rows that are not %s's postings (%v)", checkTable, differ, tenant, err)
	}
	return tag.RowsAffected(), took, nil
}

// reportCheck adds the check's figures.
func (b *bench) reportCheck(runs []checkRun, p planted) {
	of := func(f func(r checkRun) float64) spread {
		return spreadOf(pairs(runs, func(r checkRun) (float64, bool) { return f(r), true }))
	}
	n := count(int64(b.n)) + " ACH entries"
	copyS := of(func(r checkRun) float64 { return r.copyTook.Seconds() })
	base := fmt.Sprintf("COPY of its %s postings into LIKE postings INCLUDING ALL %s", count(runs[0].postings), copyS.secondsText())
	for _, f := range []struct {
		name   string
		wall   func(r checkRun) time.Duration
		target float64
	}{
		{"clearing ingest, new file, " + n, func(r checkRun) time.Duration { return r.first.wall }, newFileTarget},
		{"clearing ingest again, 100% duplicates, " + n, func(r checkRun) time.Duration { return r.again.wall }, reingestTarget},
	} {
		wall := of(func(r checkRun) float64 { return f.wall(r).Seconds() })
		ratio := of(func(r checkRun) float64 { return r.copyTook.Seconds() / f.wall(r).Seconds() })
		b.addFigure(ratioSpreadFigure(f.name, wall.secondsText(), base, ratio, f.target, true, ""))
	}
	recs := make([]reconcileRun, len(runs))
	for i, r := range runs {
		recs[i] = r.reconcile
	}
	b.reportReconcile(recs, p)
	first := of(func(r checkRun) float64 { return r.first.rssMiB() })
	again := of(func(r checkRun) float64 { return r.again.rssMiB() })
	b.addFigure(figure{
		name:  "peak RSS, clearing ingest, new file / again",
		value: first.mibText() + " / " + again.mibText(), target: fmt.Sprintf("< %d MiB", rssLimitMiB),
		met: yesNo(max(first.hi, again.hi) < rssLimitMiB),
	})
	b.addDetail("ratios", "COPY's time over the whole command's for ingest; the command's over the bare join's for reconcile")
	b.addDetail("peak RSS measured by", runs[0].first.rssFrom)
}
