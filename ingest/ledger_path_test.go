package ingest

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
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

// The ledger path end to end, below the command line: in-file repeats,
// duplicates, conflicts, returns to their original, orphan and mismatched
// returns, and a repeated return, with the ledger's balances and audit
// trail they must leave.
func TestLedgerPathVerdicts(t *testing.T) {
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
	type tally struct{ Records, Posted, Duplicates, Conflicts, Quarantined int64 }
	run := func(name string, want tally, recs ...formats.Record) {
		t.Helper()
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, []byte(name), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := File(ctx, pool, p, Options{Format: "test", ChunkSize: 2, Reader: registry.Options{Open: func(io.Reader) (formats.Reader, error) {
			return &sliceReader{recs: recs}, nil
		}}})
		if err != nil {
			t.Fatal(err)
		}
		got := tally{Records: s.Records, Posted: s.Posted, Duplicates: s.Duplicates, Conflicts: s.Conflicts, Quarantined: s.Quarantined}
		if got != want {
			t.Fatalf("%s: %+v, want %+v", name, got, want)
		}
	}
	run("a", tally{Records: 3, Posted: 2, Quarantined: 1},
		rec("ach:co:2026-11-29:001", 100, formats.Credit), rec("ach:co:2026-11-29:002", 200, formats.Debit), rec("ach:co:2026-11-29:001", 100, formats.Credit))
	run("b", tally{Records: 2, Duplicates: 1, Conflicts: 1},
		rec("ach:co:2026-11-29:001", 100, formats.Credit), rec("ach:co:2026-11-29:002", 250, formats.Debit))
	run("c", tally{Records: 3, Posted: 1, Quarantined: 2},
		ret("ach:co:2026-11-30:900", "001", 100, formats.Credit), ret("ach:co:2026-11-30:901", "009", 100, formats.Credit),
		ret("ach:co:2026-11-30:902", "002", 100, formats.Credit))
	run("c2", tally{Records: 1, Duplicates: 1}, ret("ach:co:2026-11-30:900", "001", 100, formats.Credit))

	text := func(sql string) string {
		rows, err := pool.Query(ctx, sql)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(&b, vals...)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	// 001 was credited 100 and returned; 002 was debited 200.
	balances := text(`SELECT CASE WHEN account LIKE 'cust:%' THEN 'customer' ELSE account END,
	                         sum(CASE direction WHEN 'C' THEN amount_minor ELSE -amount_minor END)::bigint
	                    FROM legs GROUP BY account ORDER BY 2`)
	if want := "customer -200\ncustomer 0\nsettlement:test 200\n"; balances != want {
		t.Fatalf("balances:\n%swant\n%s", balances, want)
	}
	audit := text(`SELECT record_key, verdict, differing_fields::text FROM audit_events ORDER BY id`)
	if want := `ach:co:2026-11-29:001 in_file_duplicate {}
ach:co:2026-11-29:001 duplicate {}
ach:co:2026-11-29:002 conflict {amount}
ach:co:2026-11-30:901 orphan_return {}
ach:co:2026-11-29:002:return link_mismatch {}
ach:co:2026-11-29:001:return duplicate {}
`; audit != want {
		t.Fatalf("audit trail:\n%swant\n%s", audit, want)
	}
}
