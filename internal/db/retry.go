package db

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"
)

// Retry runs fn again, up to five times in all, when PostgreSQL aborted it
// for a deadlock or a serialization failure. fn must be one whole
// transaction: it rolled back, so running it again is safe. what names it in
// the log; log may be nil.
func Retry(ctx context.Context, log *slog.Logger, what string, fn func() error) error {
	const attempts = 5
	for i := 1; ; i++ {
		err := fn()
		var pgErr *pgconn.PgError
		if err == nil || i == attempts || !errors.As(err, &pgErr) ||
			(pgErr.Code != pgerrcode.SerializationFailure && pgErr.Code != pgerrcode.DeadlockDetected) {
			return err
		}
		if log != nil {
			log.Warn("retrying "+what, slog.String("reason", pgErr.Message), slog.Int("attempt", i))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(i*50) * time.Millisecond):
		}
	}
}
