package ledger

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// ErrKeyTaken means a posting already holds the key a correction would post
// under.
var ErrKeyTaken = errors.New("ledger: the key is already posted")

// sqlstateKeyTaken is what clearing_post_correction raises when the
// correction's posting key is already posted (migration 00007).
const sqlstateKeyTaken = "CA006"

// PostCorrection posts approved correction id of tenant in tx. The
// database does it (clearing_post_correction, migration 00007), with the
// amount, currency, accounts and direction of the corrections row, never of
// the caller, and only when enough different logins and people approved
// it; it writes the posting of kind "correction" and its two legs through
// the same arbiter as every posting, INSERT ... ON CONFLICT DO NOTHING on
// the key. It returns the posting's id (for a correction posted already,
// the one it was posted under), or ErrKeyTaken when another posting holds
// the key, so a correction can never post twice.
func PostCorrection(ctx context.Context, tx pgx.Tx, tenant string, id int64) (int64, error) {
	var posting int64
	err := tx.QueryRow(ctx, `SELECT clearing_post_correction($1, $2)`, tenant, id).Scan(&posting)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == sqlstateKeyTaken {
		return 0, fmt.Errorf("%w: %s", ErrKeyTaken, pgErr.Message)
	}
	if err != nil {
		return 0, fmt.Errorf("ledger: post correction %d: %w", id, err)
	}
	return posting, nil
}
