package ingest

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/formats/registry"
	"github.com/clearing-dev/clearing/internal/pgtest"
	"github.com/clearing-dev/clearing/internal/pii"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

type sliceReader struct {
	recs []formats.Record
	i    int
}

func (s *sliceReader) Next() (formats.Record, error) {
	if s.i >= len(s.recs) {
		return formats.Record{}, io.EOF
	}
	s.i++
	return s.recs[s.i-1], nil
}

func TestScratch(t *testing.T) {
	pool := pgtest.Pool(t)
	ctx := context.Background()
	h := pii.New("")
	rec := func(key string, amount int64, dir formats.Direction) formats.Record {
		return formats.Record{Key: key, Kind: formats.Clearing, Reference: key[len(key)-3:], Amount: amount, Currency: "USD",
			Direction: dir, Account: h.Account("1", key), ValueDate: formats.Date(2026, 11, 29), Line: 1}
	}
	ret := func(key, ref string, amount int64, dir formats.Direction) formats.Record {
		return formats.Record{Key: key, Kind: formats.Return, Reference: ref, Amount: amount, Currency: "USD",
			Direction: dir, ValueDate: formats.Date(2026, 11, 30), Line: 1,
			Link: &formats.Link{Reference: ref, KeyPrefix: "ach:co:", Suffix: ":return"}}
	}
	run := func(name string, recs ...formats.Record) Summary {
		p := filepath.Join(t.TempDir(), name)
		os.WriteFile(p, []byte(name), 0o600)
		s, err := File(ctx, pool, p, Options{Format: "test", ChunkSize: 2, Reader: registry.Options{Open: func(io.Reader) (formats.Reader, error) {
			return &sliceReader{recs: recs}, nil
		}}})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%+v", s)
		return s
	}
	run("a", rec("ach:co:2026-11-29:001", 100, formats.Credit), rec("ach:co:2026-11-29:002", 200, formats.Debit), rec("ach:co:2026-11-29:001", 100, formats.Credit))
	run("b", rec("ach:co:2026-11-29:001", 100, formats.Credit), rec("ach:co:2026-11-29:002", 250, formats.Debit))
	run("c", ret("ach:co:2026-11-30:900", "001", 100, formats.Credit), ret("ach:co:2026-11-30:901", "009", 100, formats.Credit), ret("ach:co:2026-11-30:902", "002", 100, formats.Credit))
	run("c2", ret("ach:co:2026-11-30:900", "001", 100, formats.Credit))
	rows, _ := pool.Query(ctx, `SELECT account, sum(CASE direction WHEN 'C' THEN amount_minor ELSE -amount_minor END) FROM legs GROUP BY 1 ORDER BY 1`)
	for rows.Next() {
		var a string
		var n int64
		rows.Scan(&a, &n)
		t.Log(a, n)
	}
	rows, _ = pool.Query(ctx, `SELECT record_key, verdict, differing_fields::text FROM audit_events ORDER BY id`)
	for rows.Next() {
		var a, b, c string
		rows.Scan(&a, &b, &c)
		t.Log(a, b, c)
	}
}
