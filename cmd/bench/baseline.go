package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/formats/registry"
	"github.com/clearing-dev/clearing/internal/pii"
)

// postingRow is one row of the COPY baseline: the columns that ingest
// writes to postings, from one record of the file.
type postingRow struct {
	key, kind, reference, detail string
	altReference                 any // nil or a string, as ingest stores it
	valueDate                    time.Time
	amount                       int64
	currency, direction          string
	account, last4               string
	digest                       [32]byte
	line                         int64
}

// baselineColumns are the postings columns that ingest fills, in the order
// of postingRow.values. id and created_at take their defaults, as they do
// in ingest.
var baselineColumns = []string{
	"tenant_id", "posting_key", "kind", "source", "reference", "alt_reference", "value_date",
	"amount_minor", "currency", "direction", "account", "account_last4", "digest",
	"run_id", "record_no", "line", "detail",
}

// readRows reads the file at path with the format's own reader and returns
// one row per record that ingest would stage (skipped records are not), in
// file order, calling visit for each. Rows are built before the COPY is
// timed, so the baseline measures the server and not the parser.
//
// A key that repeats within the file (an ISO 8583 0201 repeats its 0200)
// gets its record number appended, since a raw COPY into a unique index
// cannot hold it twice; keys keep their shape and length.
func readRows(path string, o registry.Options, source string, visit func(*formats.Record) error) ([]postingRow, error) {
	var rows []postingRow
	seen := make(map[string]struct{})
	err := eachRecord(path, o, func(rec *formats.Record) error {
		if visit != nil {
			if err := visit(rec); err != nil {
				return err
			}
		}
		row := newPostingRow(rec, source)
		if _, dup := seen[row.key]; dup {
			row.key += ":" + strconv.Itoa(len(rows)+1)
		}
		seen[row.key] = struct{}{}
		rows = append(rows, row)
		return nil
	})
	return rows, err
}

// eachRecord streams the records of the file at path that ingest would
// stage to visit, holding none of them.
func eachRecord(path string, o registry.Options, visit func(*formats.Record) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	o.Hasher = pii.New(benchPIIKey)
	opened, err := registry.Open(bufio.NewReaderSize(f, 1<<20), path, o)
	if err != nil {
		return err
	}
	for {
		rec, err := opened.Reader.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", path, err)
		}
		if rec.Kind == formats.Skip {
			continue
		}
		if err := visit(&rec); err != nil {
			return err
		}
	}
}

func newPostingRow(rec *formats.Record, source string) postingRow {
	row := postingRow{
		key: rec.Key, kind: string(rec.Kind), reference: rec.Reference, detail: rec.Detail,
		valueDate: rec.ValueDate, amount: rec.Amount, currency: rec.Currency,
		direction: string(rec.Direction), account: rec.Account.ID, last4: rec.Account.Last4,
		digest: formats.Digest(rec), line: rec.Line,
	}
	if rec.AltReference != "" {
		row.altReference = rec.AltReference
	}
	if row.account == "" {
		row.account = "counterparty:" + source
	}
	return row
}

// rowSource feeds rows to CopyFrom: values appends the columns of the i-th
// row (from 1) to one reused slice.
type rowSource struct {
	rows   []postingRow
	values func(vals []any, i int, r *postingRow) []any
	i      int
	vals   []any
}

func (s *rowSource) Next() bool {
	s.i++
	return s.i <= len(s.rows)
}

func (s *rowSource) Values() ([]any, error) {
	s.vals = s.values(s.vals[:0], s.i, &s.rows[s.i-1])
	return s.vals, nil
}

func (s *rowSource) Err() error { return nil }

// Baseline tables. The full one is postings' twin: the same columns,
// defaults, identity, collations and every index (the primary key on
// (tenant_id, posting_key), the id, reference, alt_reference and value_date
// indexes), because ingest maintains all of them too. It has no triggers and
// no check constraints. The second has the primary key alone, the least a
// table with "the same unique index" can be.
const (
	baselineTable   = "bench_copy_baseline"
	baselinePKTable = "bench_copy_pk_only"
	createBaseline  = `CREATE TABLE ` + baselineTable + ` (LIKE postings
    INCLUDING DEFAULTS INCLUDING IDENTITY INCLUDING INDEXES INCLUDING STORAGE)`
	createBaselinePK = `CREATE TABLE ` + baselinePKTable + ` (LIKE postings
    INCLUDING DEFAULTS INCLUDING IDENTITY INCLUDING STORAGE);
ALTER TABLE ` + baselinePKTable + ` ADD PRIMARY KEY (tenant_id, posting_key)`
)

// copyRows creates a fresh baseline table with ddl, COPYs rows into it and
// returns the wall time of the COPY alone (it commits when it returns). The
// table is dropped afterwards so that it takes no space from what follows.
func (b *bench) copyRows(ctx context.Context, table, ddl, source string, rows []postingRow) (time.Duration, error) {
	if _, err := b.srv.pool.Exec(ctx, `DROP TABLE IF EXISTS `+table); err != nil {
		return 0, err
	}
	if _, err := b.srv.pool.Exec(ctx, ddl); err != nil {
		return 0, fmt.Errorf("create %s: %w", table, err)
	}
	if err := checkBaselineKey(ctx, b, table); err != nil {
		return 0, err
	}
	defer b.srv.pool.Exec(context.WithoutCancel(ctx), `DROP TABLE IF EXISTS `+table) //nolint:errcheck // best effort
	b.srv.checkpoint(ctx)
	tenant := b.tenant("baseline")
	src := &rowSource{rows: rows, values: func(v []any, i int, r *postingRow) []any {
		return append(v, tenant, r.key, r.kind, source, r.reference, r.altReference, r.valueDate,
			r.amount, r.currency, r.direction, r.account, r.last4, r.digest[:],
			int64(0), int64(i), r.line, r.detail)
	}}
	began := time.Now()
	n, err := b.srv.pool.CopyFrom(ctx, pgx.Identifier{table}, baselineColumns, src)
	took := time.Since(began)
	if err != nil {
		return 0, fmt.Errorf("COPY into %s: %w", table, err)
	}
	if n != int64(len(rows)) {
		return 0, fmt.Errorf("COPY into %s wrote %d rows of %d", table, n, len(rows))
	}
	return took, nil
}

// checkBaselineKey asserts that the table's primary key is postings': on
// (tenant_id, posting_key), with posting_key in the "C" collation.
func checkBaselineKey(ctx context.Context, b *bench, table string) error {
	var cols, collation string
	err := b.srv.pool.QueryRow(ctx, `
SELECT string_agg(a.attname, ',' ORDER BY k.n),
       (SELECT c.collname FROM pg_attribute a2 JOIN pg_collation c ON c.oid = a2.attcollation
         WHERE a2.attrelid = i.indrelid AND a2.attname = 'posting_key')
  FROM pg_index i
  CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, n)
  JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
 WHERE i.indrelid = $1::regclass AND i.indisprimary
 GROUP BY i.indrelid`, table).Scan(&cols, &collation)
	if err != nil {
		return fmt.Errorf("inspect %s: %w", table, err)
	}
	if cols != "tenant_id,posting_key" || collation != "C" {
		return fmt.Errorf("%s: primary key on (%s), posting_key collation %q; want (tenant_id,posting_key) and \"C\"", table, cols, collation)
	}
	return nil
}
