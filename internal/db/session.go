package db

import (
	"context"
	"errors"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// WatchClient asks the server to check every second, while it runs a
// statement for conn, that conn's client is still connected
// (client_connection_check_interval), and to end the session when it is
// not.
//
// A clearing process killed with SIGKILL leaves its server session behind.
// Without the check the server notices only when the statement it is running
// ends, or when a lock it waits for is granted, and until then the session
// keeps its transaction and the run's advisory lock: the dead run looks
// alive and cannot be resumed. The setting is made with SET after
// connecting, not as a startup parameter, which connection poolers such as
// PgBouncer refuse.
//
// It reports false and changes nothing when the server cannot check: before
// PostgreSQL 14, or on a platform that cannot poll for a closed socket (the
// server then refuses any value but 0).
func WatchClient(ctx context.Context, conn *pgx.Conn) (bool, error) {
	_, err := conn.Exec(ctx, `SET client_connection_check_interval = '1s'`)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == pgerrcode.UndefinedObject || pgErr.Code == pgerrcode.InvalidParameterValue) {
		return false, nil
	}
	return err == nil, err
}
