package statement

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clearing-dev/clearing/formats"
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
	err := tx.QueryRow(ctx, insertBalances, b.Tenant, b.Source, format, b.RunID, keys, ids, accounts, last4s, curs,
		opening, closing, openDates, closeDates, entries, credits, debits, lines).Scan(&added)
	if err != nil {
		return 0, fmt.Errorf("statement: add balances: %w", err)
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
	rows, err := tx.Query(ctx, `
SELECT balance_key, opening_minor, closing_minor, credits_minor, debits_minor, entries
  FROM statement_balances WHERE tenant_id = $1 AND source = $2 AND balance_key = ANY($3)`, b.Tenant, b.Source, keys)
	if err != nil {
		return nil, fmt.Errorf("statement: read balances: %w", err)
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

// insertBalances adds the checks of one file in one statement, from arrays:
// a file holds a few statements, not a stage's worth of records.
const insertBalances = `
WITH ins AS (
    INSERT INTO statement_balances (tenant_id, source, balance_key, format, statement_id, account, account_last4,
                                    currency, opening_minor, closing_minor, opening_date, closing_date, entries,
                                    credits_minor, debits_minor, difference_minor, run_id, line)
    SELECT $1, $2, k, $3, id, acct, last4, cur, o, c, od, cd, e, cr, db,
           c::numeric - (o::numeric + cr::numeric - db::numeric), $4, ln
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
