// Package settings keeps configuration in the database, where the
// permissions of the connection decide who may change it and no command-line
// flag can override it.
package settings

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Sentinel errors that callers branch on.
var (
	ErrUnknownKey = errors.New("settings: unknown key")
	ErrBadValue   = errors.New("settings: bad value")
	// ErrNotAdmin means the connection's role may not change settings: only
	// the owner of the schema (the role that ran the migrations) may.
	ErrNotAdmin = errors.New("settings: only an admin role may change settings")
)

// FourEyesAboveMinor is the amount, in minor units, above which a correction
// needs two different operators to approve it.
const FourEyesAboveMinor = "corrections.four_eyes_above_minor"

// known lists every setting with its default and a check of its value.
var known = map[string]struct {
	def   string
	check func(string) error
	doc   string
}{
	FourEyesAboveMinor: {"100000", nonNegativeInt,
		"corrections above this amount in minor units need two different operators to approve"},
}

func nonNegativeInt(v string) error {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("%w: %q is not a whole number of minor units, 0 or more", ErrBadValue, v)
	}
	return nil
}

// Setting is one key with its value and where the value came from.
type Setting struct {
	Key     string     `json:"key"`
	Value   string     `json:"value"`
	Default bool       `json:"default"` // true when nothing was set
	SetBy   string     `json:"set_by,omitempty"`
	SetAt   *time.Time `json:"set_at,omitempty"`
	Doc     string     `json:"doc"`
}

// Querier is satisfied by pgx.Tx and *pgxpool.Pool.
type Querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Get returns one setting of the tenant, or its default.
func Get(ctx context.Context, q Querier, tenant, key string) (Setting, error) {
	k, ok := known[key]
	if !ok {
		return Setting{}, fmt.Errorf("%w %q (known: %v)", ErrUnknownKey, key, Keys())
	}
	s := Setting{Key: key, Doc: k.doc}
	var at time.Time
	err := q.QueryRow(ctx, `SELECT value, set_by, set_at FROM config WHERE tenant_id = $1 AND key = $2`,
		tenant, key).Scan(&s.Value, &s.SetBy, &at)
	if errors.Is(err, pgx.ErrNoRows) {
		s.Value, s.Default = k.def, true
		return s, nil
	}
	if err != nil {
		return Setting{}, fmt.Errorf("settings: get %s: %w", key, err)
	}
	s.SetAt = &at
	return s, nil
}

// Int returns a setting as an integer.
func Int(ctx context.Context, q Querier, tenant, key string) (int64, error) {
	s, err := Get(ctx, q, tenant, key)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(s.Value, 10, 64)
}

// Set changes one setting. The database refuses it unless the connection's
// role may write the config table, which only the admin may.
func Set(ctx context.Context, pool *pgxpool.Pool, tenant, key, value string) (Setting, error) {
	k, ok := known[key]
	if !ok {
		return Setting{}, fmt.Errorf("%w %q (known: %v)", ErrUnknownKey, key, Keys())
	}
	if err := k.check(value); err != nil {
		return Setting{}, err
	}
	_, err := pool.Exec(ctx, `
INSERT INTO config (tenant_id, key, value) VALUES ($1, $2, $3)
ON CONFLICT (tenant_id, key) DO UPDATE SET value = EXCLUDED.value, set_by = current_user, set_at = now()`,
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

// Keys lists the known settings.
func Keys() []string {
	keys := make([]string, 0, len(known))
	for k := range known {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
