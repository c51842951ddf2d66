package ledger

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clearing-dev/clearing/internal/money"
)

// Balance is one account's position in one currency, computed from the
// legs: credits minus debits, in minor units. Each leg fits in an int64, but
// their sums need not (ten thousand legs at the amount cap pass it), so the
// sums are numeric in SQL and exact Totals here.
type Balance struct {
	Account  string      `json:"account"`
	Currency string      `json:"currency"`
	Kind     string      `json:"kind,omitempty"` // set when broken down by posting kind
	Debits   money.Total `json:"debits"`
	Credits  money.Total `json:"credits"`
	Balance  money.Total `json:"balance"`
}

// BalanceFilter narrows Balances.
type BalanceFilter struct {
	// Account is an exact account, or a prefix when it ends in "*"
	// ("settlement:*"). Empty means every account.
	Account string
	// AsOf, when set, counts only legs whose value date is on or before it.
	AsOf *time.Time
	// ByKind breaks each balance down by the kind of posting its legs
	// belong to (clearing, return, reversal, correction, ...).
	ByKind bool
}

// Balances computes balances from the legs.
func Balances(ctx context.Context, q Querier, tenant string, f BalanceFilter) ([]Balance, error) {
	where := []string{"l.tenant_id = $1"}
	args := []any{tenant}
	if f.Account != "" {
		if prefix, ok := strings.CutSuffix(f.Account, "*"); ok {
			args = append(args, prefix)
			where = append(where, fmt.Sprintf("starts_with(l.account, $%d)", len(args)))
		} else {
			args = append(args, f.Account)
			where = append(where, fmt.Sprintf("l.account = $%d", len(args)))
		}
	}
	if f.AsOf != nil {
		args = append(args, *f.AsOf)
		where = append(where, fmt.Sprintf("l.value_date <= $%d", len(args)))
	}
	kind, join := "''", ""
	if f.ByKind {
		kind, join = "p.kind", " JOIN postings p ON p.tenant_id = l.tenant_id AND p.id = l.posting_id"
	}
	// sum() of a bigint is numeric: exact at any size, and scanned into a
	// money.Total, never an int64.
	sql := `
SELECT l.account, l.currency, ` + kind + ` AS kind,
       coalesce(sum(l.amount_minor) FILTER (WHERE l.direction = 'D'), 0) AS debits,
       coalesce(sum(l.amount_minor) FILTER (WHERE l.direction = 'C'), 0) AS credits
  FROM legs l` + join + `
 WHERE ` + strings.Join(where, " AND ") + `
 GROUP BY 1, 2, 3
 ORDER BY 1, 2, 3`
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("ledger: balances: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Balance, error) {
		var b Balance
		err := row.Scan(&b.Account, &b.Currency, &b.Kind, &b.Debits, &b.Credits)
		b.Balance = b.Credits.Sub(b.Debits)
		return b, err
	})
}
