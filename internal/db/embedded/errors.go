package embedded

import "errors"

// Sentinel errors that callers branch on. Each message says what to do, as
// the command line shows it to the operator unchanged.
var (
	// ErrNoServerBinaries means no usable PostgreSQL server binaries (initdb,
	// pg_ctl, postgres) were found for the embedded cluster.
	ErrNoServerBinaries = errors.New("embedded: no PostgreSQL server binaries (initdb, pg_ctl, postgres) found on PATH or under /usr/lib/postgresql/*/bin; " +
		"install the PostgreSQL server (Debian/Ubuntu: apt-get install postgresql), " +
		"or use an existing database with --database-url or CLEARING_DATABASE_URL")

	// ErrNoServerUser means clearing runs as root, PostgreSQL refuses to, and
	// the OS user that should run the server does not exist.
	ErrNoServerUser = errors.New("embedded: PostgreSQL refuses to run as root and there is no OS user to run the embedded server as; " +
		"install the PostgreSQL server (Debian/Ubuntu: apt-get install postgresql creates the user postgres), run clearing as another user, " +
		"or use an existing database with --database-url or CLEARING_DATABASE_URL")

	// ErrHome means the folder chosen for the embedded cluster
	// (CLEARING_HOME) cannot hold it; the wrapping message says why.
	ErrHome = errors.New("embedded: the embedded cluster cannot live in this CLEARING_HOME")

	// ErrServer means the embedded server could not be created,
	// started or stopped, or another clearing process kept it locked for too
	// long; the wrapping message carries the server's own words from its
	// log.
	ErrServer = errors.New("embedded: the embedded PostgreSQL server failed")
)
