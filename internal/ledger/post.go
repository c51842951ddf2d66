package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clearing-dev/clearing/formats"
)

// ErrKeyTaken means a posting already holds the key a correction would post
// under.
var ErrKeyTaken = errors.New("ledger: the key is already posted")

// Correction is a correcting posting: money moved between a counter
// account (suspense or adjustments) and the source's settlement account,
// under a derived key, with kind "correction".
type Correction struct {
	Tenant     string
	Key        string
	Source     string
	Reference  string
	RefersTo   *int64 // the posting it adjusts, if any
	ValueDate  time.Time
	Amount     int64
	Currency   string
	Direction  string // side of the counter account, as on postings
	Counter    string
	Settlement string
	Detail     string
}

// PostCorrection posts c in tx through the same arbiter as every posting:
// INSERT ... ON CONFLICT DO NOTHING on the key. It returns ErrKeyTaken when
// the key is already posted, so a correction can never post twice.
func PostCorrection(ctx context.Context, tx pgx.Tx, c Correction) (int64, error) {
	if c.Amount <= 0 || (c.Direction != "C" && c.Direction != "D") || c.Counter == "" || c.Settlement == "" {
		return 0, fmt.Errorf("ledger: correction %q is not a valid posting", c.Key)
	}
	digest := formats.Digest(&formats.Record{Key: c.Key, Kind: "correction", Amount: c.Amount, Currency: c.Currency,
		Direction: formats.Direction(c.Direction), ValueDate: c.ValueDate})
	var id int64
	err := tx.QueryRow(ctx, `
INSERT INTO postings (tenant_id, posting_key, kind, source, reference, value_date, amount_minor, currency,
                      direction, account, digest, refers_to, detail)
VALUES ($1, $2, 'correction', $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
ON CONFLICT (tenant_id, posting_key) DO NOTHING
RETURNING id`, c.Tenant, c.Key, c.Source, c.Reference, c.ValueDate, c.Amount, c.Currency, c.Direction,
		c.Counter, digest[:], c.RefersTo, c.Detail).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, fmt.Errorf("%w: %s", ErrKeyTaken, c.Key)
	}
	if err != nil {
		return 0, fmt.Errorf("ledger: post correction %s: %w", c.Key, err)
	}
	settlementSide := "C"
	if c.Direction == "C" {
		settlementSide = "D"
	}
	_, err = tx.Exec(ctx, `
INSERT INTO legs (tenant_id, posting_id, leg_no, account, direction, amount_minor, currency, value_date)
VALUES ($1, $2, 1, $3, $4, $5, $6, $7), ($1, $2, 2, $8, $9, $5, $6, $7)`,
		c.Tenant, id, c.Counter, c.Direction, c.Amount, c.Currency, c.ValueDate, c.Settlement, settlementSide)
	if err != nil {
		return 0, fmt.Errorf("ledger: legs of correction %s: %w", c.Key, err)
	}
	return id, nil
}
