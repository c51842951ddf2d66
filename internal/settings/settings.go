// Package settings keeps configuration in the database, where the
// permissions of the connection decide who may change it and no command-line
// flag can override it.
package settings

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clearing-dev/clearing/internal/money"
)

// Sentinel errors that callers branch on.
var (
	ErrUnknownKey = errors.New("settings: unknown key")
	ErrBadValue   = errors.New("settings: bad value")
	// ErrNotAdmin means the connection's role may not change settings: only
	// the owner of the schema (the role that ran the migrations) may.
	ErrNotAdmin = errors.New("settings: only an admin role may change settings")
)

// FourEyesAbovePrefix begins the key of a currency's four-eyes threshold,
// in major units of that currency: corrections.four_eyes_above.USD = 1000
// means that a USD correction above 1,000.00 needs two different logins and
// two different people to approve it, and one up to that amount needs one.
// A currency without a threshold needs two approvals for every correction.
// The database reads these keys itself (clearing_approvals_needed,
// migration 00007), with the currency's exponent.
const FourEyesAbovePrefix = "corrections.four_eyes_above."

// RetiredFourEyesAboveMinor is the single threshold, in minor units of
// whatever currency, that the per-currency thresholds replaced. Migration
// 00007 moved each tenant's value to every currency of its corrections.
const RetiredFourEyesAboveMinor = "corrections.four_eyes_above_minor"

// FourEyesAbove is the key of currency's four-eyes threshold.
func FourEyesAbove(currency string) string { return FourEyesAbovePrefix + currency }

// maxThresholdMinor bounds a threshold: the database reads at most 18
// integer digits.
const maxThresholdMinor = 999_999_999_999_999_999

// parseKey checks key and returns it as stored, with its currency.
func parseKey(key string) (string, money.Currency, error) {
	if key == RetiredFourEyesAboveMinor {
		return "", money.Currency{}, fmt.Errorf("%w %q: it is replaced by one threshold per currency in major units, "+
			"such as %s 1000 (1,000.00 USD); see 'clearing config --help'", ErrUnknownKey, key, FourEyesAbove("USD"))
	}
	code, ok := strings.CutPrefix(key, FourEyesAbovePrefix)
	if !ok {
		return "", money.Currency{}, fmt.Errorf("%w %q (known: %s<CURRENCY>)", ErrUnknownKey, key, FourEyesAbovePrefix)
	}
	c, err := money.LookupCurrency(code)
	if err != nil || code == "" {
		return "", money.Currency{}, fmt.Errorf("%w %q: %q is not an ISO 4217 currency", ErrUnknownKey, key, code)
	}
	return FourEyesAbove(c.Code), c, nil
}

// parseThreshold reads a threshold in major units of c into minor units.
func parseThreshold(v string, c money.Currency) (int64, error) {
	n, err := money.ParseMajor(v, c)
	if err != nil || n < 0 || n > maxThresholdMinor || strings.ContainsAny(v[:1], "+-") {
		return 0, fmt.Errorf("%w: %q is not an amount of %s in major units, 0 or more, with at most %d decimals (such as 1000)",
			ErrBadValue, v, c.Code, c.Exponent)
	}
	return n, nil
}

// Setting is one key with its value and where the value came from. A
// four-eyes threshold also carries its currency and its value in minor
// units.
type Setting struct {
	Key        string     `json:"key"`
	Value      string     `json:"value"`
	Default    bool       `json:"default"` // true when nothing was set
	Currency   string     `json:"currency,omitempty"`
	AboveMinor *int64     `json:"above_minor,omitempty"`
	SetBy      string     `json:"set_by,omitempty"`
	SetAt      *time.Time `json:"set_at,omitempty"`
	Doc        string     `json:"doc"`
}

// Querier is satisfied by pgx.Tx and *pgxpool.Pool.
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// describe fills in what s means, from its value.
func describe(s *Setting, c money.Currency) {
	s.Currency = c.Code
	if s.Default {
		s.Doc = fmt.Sprintf("not set: every %s correction needs two different operators (logins and people) to approve it", c.Code)
		return
	}
	if n, err := parseThreshold(s.Value, c); err == nil {
		s.AboveMinor = &n
	}
	s.Doc = fmt.Sprintf("%s corrections above %s %s need two different operators (logins and people); up to it, one",
		c.Code, s.Value, c.Code)
}

// Get returns one setting of the tenant; a threshold that is not set comes
// back with Default true and an empty value.
func Get(ctx context.Context, q Querier, tenant, key string) (Setting, error) {
	key, c, err := parseKey(key)
	if err != nil {
		return Setting{}, err
	}
	s := Setting{Key: key}
	var at time.Time
	err = q.QueryRow(ctx, `SELECT value, set_by, set_at FROM config WHERE tenant_id = $1 AND key = $2`,
		tenant, key).Scan(&s.Value, &s.SetBy, &at)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		s.Default = true
	case err != nil:
		return Setting{}, fmt.Errorf("settings: get %s: %w", key, err)
	default:
		s.SetAt = &at
	}
	describe(&s, c)
	return s, nil
}

// List returns every setting the tenant has set, by key.
func List(ctx context.Context, q Querier, tenant string) ([]Setting, error) {
	rows, err := q.Query(ctx, `
SELECT key, value, set_by, set_at FROM config WHERE tenant_id = $1 AND key LIKE 'corrections.four\_eyes\_above.%' ORDER BY key`,
		tenant)
	if err != nil {
		return nil, fmt.Errorf("settings: list: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Setting, error) {
		var s Setting
		var at time.Time
		err := row.Scan(&s.Key, &s.Value, &s.SetBy, &at)
		s.SetAt = &at
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("settings: list: %w", err)
	}
	for i := range out {
		if _, c, err := parseKey(out[i].Key); err == nil {
			describe(&out[i], c)
		}
	}
	return out, nil
}

// Set changes one setting. The database refuses it unless the connection's
// role may write the config table, which only the admin may.
func Set(ctx context.Context, pool *pgxpool.Pool, tenant, key, value string) (Setting, error) {
	key, c, err := parseKey(key)
	if err != nil {
		return Setting{}, err
	}
	minor, err := parseThreshold(value, c)
	if err != nil {
		return Setting{}, err
	}
	value = money.Format(minor, c) // one spelling: "1000" in USD is stored as "1000.00"
	_, err = pool.Exec(ctx, `
INSERT INTO config (tenant_id, key, value) VALUES ($1, $2, $3)
ON CONFLICT (tenant_id, key) DO UPDATE SET value = EXCLUDED.value, set_by = EXCLUDED.set_by, set_at = EXCLUDED.set_at`,
		tenant, key, value)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == pgerrcode.InsufficientPrivilege {
		return Setting{}, fmt.Errorf("%w: %s", ErrNotAdmin, pgErr.Message)
	}
	if err != nil {
		return Setting{}, fmt.Errorf("settings: set %s: %w", key, err)
	}
	return Get(ctx, pool, tenant, key)
}
