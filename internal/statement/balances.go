package statement

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/db"
)

// Balances adds a statement's balance checks (formats.StatementBalance) to
// statement_balances under b's source, in tx, and returns how many were
// new: importing the same statement again adds none. A check is keyed by
// the format, the account, the statement's own id and the currency
// (BalanceKey); a file that repeats a statement id for one account and
// currency keeps each, numbered in file order.
func Balances(ctx context.Context, tx pgx.Tx, b Batch, format string, bs []formats.StatementBalance) (int64, error) {
	if len(bs) == 0 {
		return 0, nil
	}
	n := len(bs)
	keys := balanceKeys(format, bs)
	ids, accounts, last4s, curs := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	opening, closing, entries, credits, debits, lines := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	openDates, closeDates := make([]*time.Time, n), make([]time.Time, n)
	for i, s := range bs {
		ids[i], accounts[i], last4s[i], curs[i] = s.Statement, s.Account.ID, s.Account.Last4, s.Currency
		opening[i], closing[i], entries[i], credits[i], debits[i], lines[i] = s.Opening, s.Closing, s.Entries, s.Credits, s.Debits, s.Line
		closeDates[i] = s.ClosingDate
		if closeDates[i].IsZero() {
			closeDates[i] = s.OpeningDate
		}
		if !s.OpeningDate.IsZero() {
			d := s.OpeningDate
			openDates[i] = &d
		}
		if closeDates[i].IsZero() {
			return 0, fmt.Errorf("statement: balances of statement %q in %s have no date", s.Statement, s.Currency)
		}
	}
	var added int64
	err := tx.QueryRow(ctx, addBalances.Call(), b.Tenant, b.RunID, b.Source, format, keys, ids, accounts, last4s, curs,
		opening, closing, openDates, closeDates, entries, credits, debits, lines).Scan(&added)
	if err != nil {
		return 0, fmt.Errorf("statement: add balances: %w", addBalances.Err(err))
	}
	return added, nil
}

// balanceKeys returns the key of each check: BalanceKey, numbered "~2",
// "~3" in file order when a file repeats one.
func balanceKeys(format string, bs []formats.StatementBalance) []string {
	keys := make([]string, len(bs))
	seen := make(map[string]int, len(bs))
	for i, s := range bs {
		k := BalanceKey(format, s)
		seen[k]++
		if c := seen[k]; c > 1 {
			k = fmt.Sprintf("%s~%d", k, c)
		}
		keys[i] = k
	}
	return keys
}

// storedBalances reads the stored checks of source $2 under the keys $3.
// Restated reads them before the import's run is started, in its
// transaction: a routine for no run, reading what its caller may read.
var storedBalances = db.Routine{Name: "clearing_stored_balances", Args: "text, text, text[]", NoRun: true,
	Returns: "TABLE (key text, opening bigint, closing bigint, credits bigint, debits bigint, entries bigint)", Body: `
SELECT balance_key, opening_minor, closing_minor, credits_minor, debits_minor, entries
  FROM statement_balances WHERE tenant_id = $1 AND source = $2 AND balance_key = ANY($3)`}

// maxRestated bounds the sentences Restated returns for one file.
const maxRestated = 100

// Restated returns a sentence for each check of bs whose key an earlier
// import of b's source holds with other balances or entries: a bank that
// re-sent a statement with other figures. The stored check is kept (rows
// are never changed), so the sentence goes on the run as a warning for a
// person, never silently. It reads the stored rows of the file's keys only.
func Restated(ctx context.Context, tx pgx.Tx, b Batch, format string, bs []formats.StatementBalance) ([]string, error) {
	if len(bs) == 0 {
		return nil, nil
	}
	keys := balanceKeys(format, bs)
	rows, err := tx.Query(ctx, storedBalances.Call(), b.Tenant, b.Source, keys)
	if err != nil {
		return nil, fmt.Errorf("statement: read balances: %w", storedBalances.Err(err))
	}
	type figures struct{ opening, closing, credits, debits, entries int64 }
	stored := map[string]figures{}
	var k string
	var f figures
	if _, err := pgx.ForEachRow(rows, []any{&k, &f.opening, &f.closing, &f.credits, &f.debits, &f.entries}, func() error {
		stored[k] = f
		return nil
	}); err != nil {
		return nil, fmt.Errorf("statement: read balances: %w", err)
	}
	var out []string
	more := 0
	for i, s := range bs {
		old, ok := stored[keys[i]]
		if !ok || old == (figures{s.Opening, s.Closing, s.Credits, s.Debits, s.Entries}) {
			continue
		}
		if len(out) == maxRestated {
			more++
			continue
		}
		out = append(out, fmt.Sprintf("line %d: statement_restated: statement balance %s was imported before with other balances or entries; the first import's are kept", s.Line, keys[i]))
	}
	if more > 0 {
		out = append(out, fmt.Sprintf("statement_restated: %d more statement balances were imported before with other figures", more))
	}
	return out, nil
}

// addBalances adds the checks of one file in one statement, from arrays (a
// file holds a few statements, not a stage's worth of records): $1 tenant,
// $2 run, $3 source, $4 format, then one array per column.
var addBalances = db.Routine{Name: "clearing_add_balances",
	Args:    "text, bigint, text, text, text[], text[], text[], text[], text[], bigint[], bigint[], date[], date[], bigint[], bigint[], bigint[], bigint[]",
	Returns: "SETOF bigint", Body: insertBalances}

const insertBalances = `
WITH ins AS (
    INSERT INTO statement_balances (tenant_id, source, balance_key, format, statement_id, account, account_last4,
                                    currency, opening_minor, closing_minor, opening_date, closing_date, entries,
                                    credits_minor, debits_minor, difference_minor, run_id, line)
    SELECT $1, $3, k, $4, id, acct, last4, cur, o, c, od, cd, e, cr, db,
           c::numeric - (o::numeric + cr::numeric - db::numeric), $2, ln
      FROM unnest($5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bigint[], $11::bigint[],
                  $12::date[], $13::date[], $14::bigint[], $15::bigint[], $16::bigint[], $17::bigint[])
           AS u(k, id, acct, last4, cur, o, c, od, cd, e, cr, db, ln)
     ORDER BY k
    ON CONFLICT (tenant_id, source, balance_key) DO NOTHING
    RETURNING 1
)
SELECT count(*) FROM ins`

// BalanceKey is the readable key of a statement's balance check:
// "<format>:<account>:<statement id>:<closing date>:<currency>", where the account is the
// first 16 hex digits of its keyed hash (never the number itself) and the
// statement id is escaped like a line key's segments ("-" when empty).
func BalanceKey(format string, s formats.StatementBalance) string {
	token := "-"
	if id, ok := strings.CutPrefix(s.Account.ID, "cust:"); ok && len(id) >= 16 {
		token = id[:16]
	}
	id := escapeSegment(s.Statement)
	if id == "" {
		id = "-"
	}
	return format + ":" + token + ":" + id + ":" + s.ClosingDate.Format(time.DateOnly) + ":" + s.Currency
}

// escapeSegment writes '%', ':', '~', spaces, control bytes and non-ASCII
// as %XX, so that a bank's value cannot be read as a separator.
func escapeSegment(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= 0x20 || c >= 0x7f || c == '%' || c == ':' || c == '~' {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
