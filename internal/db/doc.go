// Package db holds what clearing needs of any PostgreSQL server, embedded
// or configured: the schema migrations (Migrate, SchemaVersion and
// MigrationsDigest; the .sql files of migrations/ are embedded and applied
// with goose under an advisory lock), the retry of a transaction that the
// server aborted for a deadlock or a serialization failure (Retry), and the
// session setting that ends a dead client's session (WatchClient).
//
// The private cluster that the command line starts when no database URL is
// configured lives in internal/db/embedded: supervising server processes
// and file locks is another job than talking to a server, and the two share
// no code.
package db
