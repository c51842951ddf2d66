// Package embedded supervises clearing's private PostgreSQL cluster: a
// cluster in a home folder (CLEARING_HOME, else the one DefaultHome names),
// created with the server binaries of the machine on first use, started by
// the first clearing process that needs it and stopped by the last, with
// file locks in the home as the only coordination between processes. The
// command line uses it when no database URL is configured; the tests start
// throw-away clusters with it (Options.Ephemeral), and the benchmarks a
// durable one in a temporary folder.
//
// It knows nothing of the schema: the caller connects with ConnString and
// migrates with db.Migrate, as it would any other server.
package embedded

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Layout of a home, relative to its root:
//
//	embedded.lock, embedded.users   the locks (see lock.go)
//	pg/                             0700, owned by the server's OS user
//	pg/data/                        the cluster (PGDATA)
//	pg/server.log                   everything the server writes
//	pg/.s.PGSQL.5432                the server's only socket
const (
	pgDirName     = "pg"
	dataDirName   = "data"
	serverLogName = "server.log"
	serverPort    = 5432
	superuser     = "postgres"
	// maxSocketPath is the longest socket path PostgreSQL accepts: the
	// 108-byte sun_path of Linux less its terminating NUL.
	maxSocketPath = 107
	// defaultDatabase is the database that clearing itself uses.
	defaultDatabase = "clearing"
)

// Options configures Start. The zero value is the embedded cluster of the
// command line: DefaultHome, database clearing.
type Options struct {
	// Home is the folder that holds the cluster. Empty means DefaultHome.
	Home string
	// Logger receives clearing's own messages about the cluster; the
	// server's log goes to pg/server.log in Home, never here. Nil discards.
	Logger *slog.Logger
	// Database is created on first use and named by ConnString. Empty means
	// "clearing".
	Database string
	// ServerUser is the OS user that runs the server when clearing runs as
	// root, which PostgreSQL refuses to be; empty means "postgres". An
	// existing cluster keeps running as the user who owns it. It is ignored
	// for any other caller, who runs the server as themselves.
	ServerUser string
	// SearchPath replaces PATH and /usr/lib/postgresql/*/bin as the folders
	// searched for initdb, pg_ctl and postgres. Nil means those.
	SearchPath []string
	// Timeout bounds each wait: for another clearing process's lock, for the
	// server to start and for it to stop. Zero means one minute.
	Timeout time.Duration
	// Ephemeral trades durability for speed, for a throw-away cluster that
	// is deleted after use (tests): initdb does not sync, and fsync,
	// synchronous_commit and full_page_writes are off. A crash can corrupt
	// such a cluster, so it must never hold a ledger.
	Ephemeral bool
	// Port is the server's port, which names its socket; zero means 5432.
	// Throw-away clusters side by side each take one of their own.
	Port int
	// Loopback makes an Ephemeral cluster also accept TCP connections on
	// 127.0.0.1, without a password, for test clusters whose servers
	// connect to each other (a Citus coordinator and its workers). It is
	// refused without Ephemeral: anyone on the machine could connect.
	Loopback bool
	// Settings are lines added to the server's configuration, such as
	// "shared_preload_libraries = 'citus'".
	Settings []string
}

// Cluster is a private PostgreSQL cluster in a home folder, shared by
// every clearing process that uses the same home. It is safe for concurrent
// use.
type Cluster struct {
	home, pgDir, dataDir string
	database             string
	ephemeral            bool
	port                 int
	loopback             bool
	settings             []string
	timeout              time.Duration
	log                  *slog.Logger
	bin                  serverBinaries
	account              serverAccount

	mu    sync.Mutex
	users *os.File // the shared users lock; nil once closed
}

// DefaultHome returns the folder that holds the embedded cluster: the
// CLEARING_HOME environment variable when it is set, otherwise
// ~/.local/share/clearing. For root it is /var/lib/clearing instead,
// because the server runs as the postgres user, who cannot enter root's
// home (docs/decisions/embedded-cluster-as-root.md).
func DefaultHome() (string, error) {
	if h := os.Getenv("CLEARING_HOME"); h != "" {
		return filepath.Abs(h)
	}
	if os.Geteuid() == 0 {
		return "/var/lib/clearing", nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("embedded: no home folder for the embedded cluster; set CLEARING_HOME: %w", err)
	}
	return filepath.Join(home, ".local", "share", "clearing"), nil
}

// Start makes the cluster in opts.Home ready for use: it creates the
// cluster on first use (initdb and the database), starts the server unless
// another clearing process already runs it, and registers the caller as one
// of its users. Close must be called when done. Only the last user's Close
// stops the server.
//
// Without server binaries it returns an error wrapping ErrNoServerBinaries,
// which says what to install or set instead.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	began := time.Now()
	e, err := newCluster(ctx, opts)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(e.timeout)
	control, err := lockFile(ctx, filepath.Join(e.home, controlLockName), syscall.LOCK_EX, deadline)
	if err != nil {
		return nil, err
	}
	defer control.Close()
	users, err := lockFile(ctx, filepath.Join(e.home, usersLockName), syscall.LOCK_SH, deadline)
	if err != nil {
		return nil, err
	}
	started, err := e.prepare(ctx, deadline)
	if err != nil {
		users.Close()
		return nil, err
	}
	e.users = users
	if started {
		e.log.Debug("embedded PostgreSQL started", slog.String("home", e.home),
			slog.Int("version", e.bin.major), slog.Duration("took", time.Since(began)))
	} else {
		e.log.Debug("embedded PostgreSQL already running", slog.String("home", e.home))
	}
	return e, nil
}

// newCluster resolves the options, finds the server programs and the OS
// user to run them, and creates the home folder. It takes no lock.
func newCluster(ctx context.Context, opts Options) (*Cluster, error) {
	e := &Cluster{home: opts.Home, database: opts.Database, ephemeral: opts.Ephemeral, timeout: opts.Timeout, log: opts.Logger,
		port: opts.Port, loopback: opts.Loopback, settings: opts.Settings}
	var err error
	if e.loopback && !e.ephemeral {
		return nil, fmt.Errorf("embedded: a cluster that accepts TCP connections without a password must be ephemeral: %w", ErrHome)
	}
	if e.home == "" {
		if e.home, err = DefaultHome(); err != nil {
			return nil, err
		}
	}
	if e.home, err = filepath.Abs(e.home); err != nil {
		return nil, fmt.Errorf("embedded: %w", err)
	}
	if e.database == "" {
		e.database = defaultDatabase
	}
	if e.timeout <= 0 {
		e.timeout = time.Minute
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	e.pgDir = filepath.Join(e.home, pgDirName)
	e.dataDir = filepath.Join(e.pgDir, dataDirName)
	if err := checkHomePath(e.home, e.socketPath()); err != nil {
		return nil, err
	}
	search := opts.SearchPath
	if search == nil {
		search = defaultSearchPath()
	}
	found, skipped := findServerBinaries(ctx, search)
	if e.bin, err = chooseServerBinaries(found, skipped, e.dataDir); err != nil {
		return nil, err
	}
	if err := makeHome(e.home, os.Geteuid() == 0); err != nil {
		return nil, err
	}
	if e.account, err = serverAccountFor(e.pgDir, opts.ServerUser); err != nil {
		return nil, err
	}
	if err := e.account.checkReachable(e.home); err != nil {
		return nil, err
	}
	return e, nil
}

// checkHomePath rejects a home whose socket path is longer than a unix
// socket address can be, and characters that the server's configuration
// file cannot quote. Failing is preferred to moving the socket elsewhere:
// the socket stays inside the home's 0700 folder, which is what makes trust
// authentication safe (docs/decisions/embedded-cluster.md).
func checkHomePath(home, socket string) error {
	if n := len(socket); n > maxSocketPath {
		return fmt.Errorf("embedded: the embedded server's socket %s would be %d bytes long, and unix sockets allow at most %d; "+
			"set CLEARING_HOME to a folder whose path is at most %d bytes: %w",
			socket, n, maxSocketPath, len(home)-(n-maxSocketPath), ErrHome)
	}
	if strings.ContainsAny(home, "\"\n\r\x00") {
		return fmt.Errorf("embedded: the path %q contains a double quote or a line break, which the server's configuration cannot hold: %w",
			home, ErrHome)
	}
	return nil
}

// makeHome creates the home folder when it does not exist. Root's home must
// let the server's user pass through (0711) to reach pg/; anyone else's is
// private (0700).
func makeHome(home string, asRoot bool) error {
	st, err := os.Stat(home)
	if err == nil {
		if !st.IsDir() {
			return fmt.Errorf("embedded: %s is not a folder: %w", home, ErrHome)
		}
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("embedded: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(home), 0o755); err != nil {
		return fmt.Errorf("embedded: %w", err)
	}
	mode := fs.FileMode(0o700)
	if asRoot {
		mode = 0o711
	}
	if err := os.Mkdir(home, mode); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		return fmt.Errorf("embedded: %w", err)
	}
	// The umask may have removed bits that the server's user needs.
	if err := os.Chmod(home, mode); err != nil {
		return fmt.Errorf("embedded: %w", err)
	}
	return nil
}

// ConnString returns a connection string for pgxpool.ParseConfig that
// reaches the database over the cluster's unix socket.
func (e *Cluster) ConnString() string {
	return e.connString(e.database)
}

// connString is ConnString for any database of the cluster.
func (e *Cluster) connString(database string) string {
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable",
		quoteConnValue(e.pgDir), e.serverPort(), quoteConnValue(superuser), quoteConnValue(database))
}

// quoteConnValue quotes a value of a keyword/value connection string.
func quoteConnValue(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// socketPath is where the server listens.
func (e *Cluster) socketPath() string {
	return filepath.Join(e.pgDir, fmt.Sprintf(".s.PGSQL.%d", e.serverPort()))
}

// serverPort is the server's port: Options.Port, or 5432.
func (e *Cluster) serverPort() int {
	if e.port == 0 {
		return serverPort
	}
	return e.port
}

// Close ends the caller's use of the cluster and stops the server when no
// other clearing process still uses it. It is safe to call more than once.
//
// ctx bounds only the waiting: a cancelled ctx never stops Close from asking
// the server to shut down when the caller is its last user, but then Close
// returns without waiting for the shutdown to finish. When it cannot take
// the lock in time, the server is left running, and the next command that
// uses the home stops it.
func (e *Cluster) Close(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.users == nil {
		return nil
	}
	users := e.users
	e.users = nil
	began := time.Now()
	deadline := began.Add(e.timeout)
	control, err := lockFile(ctx, filepath.Join(e.home, controlLockName), syscall.LOCK_EX, deadline)
	users.Close()
	if err != nil {
		return fmt.Errorf("embedded: leaving the embedded server running: %w", err)
	}
	defer control.Close()
	last, err := soleUser(filepath.Join(e.home, usersLockName))
	if err != nil {
		return err
	}
	if !last {
		e.log.Debug("embedded PostgreSQL left running for its other users", slog.String("home", e.home))
		return nil
	}
	stopped, err := e.stop(ctx, deadline)
	if err != nil {
		return err
	}
	if stopped {
		e.log.Debug("embedded PostgreSQL stopped", slog.String("home", e.home), slog.Duration("took", time.Since(began)))
	}
	return nil
}
