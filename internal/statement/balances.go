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
	keys, ids, accounts, last4s, curs := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	opening, closing, entries, credits, debits, lines := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	openDates, closeDates := make([]*time.Time, n), make([]time.Time, n)
	seen := make(map[string]int, n)
	for i, s := range bs {
		k := BalanceKey(format, s)
		seen[k]++
		if c := seen[k]; c > 1 {
			k = fmt.Sprintf("%s~%d", k, c)
		}
		keys[i], ids[i], accounts[i], last4s[i], curs[i] = k, s.Statement, s.Account.ID, s.Account.Last4, s.Currency
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
