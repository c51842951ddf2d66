// Package pgtest gives tests a real PostgreSQL database of their own, so
// that they can run in parallel and prove what only a real server can, such
// as a unique index under concurrency.
//
// The server is the one named by CLEARING_TEST_DATABASE_URL, or else a
// throw-away cluster that Main starts for the test binary (and that
// cmd/pgtestcluster starts once for a whole `go test ./...`).
// Every database handed out is a clone of a template migrated with
// db.Migrate, and is dropped when its test ends.
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestPosting(t *testing.T) {
//		t.Parallel()
//		pool := pgtest.Pool(t)
//		...
//	}
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// EnvURL names the environment variable that points the tests at an
// existing server. The role it names must be allowed to create databases.
const EnvURL = "CLEARING_TEST_DATABASE_URL"

// cleanupTimeout bounds creating and dropping one test's database.
const cleanupTimeout = time.Minute

// state is what the test binary shares between its tests.
var state struct {
	mu        sync.Mutex
	mainURL   string        // the server Main started, if it started one
	admin     *pgxpool.Pool // connections to the server's own database
	adminURL  string
	workers   []*pgxpool.Pool // a Citus coordinator's workers, their own databases
	tmplName  string
	tmplErr   error
	tmplBuilt bool
}

// Main runs the tests of a package: `func TestMain(m *testing.M) {
// pgtest.Main(m) }`. When CLEARING_TEST_DATABASE_URL is unset it starts a
// throw-away cluster first and stops it afterwards, also when the binary is
// interrupted (SIGINT, SIGTERM). It exits with m.Run's code, or 1 when the
// cluster cannot be started or stopped.
func Main(m *testing.M) {
	os.Exit(run(m))
}

// Run is Main without the exit, for a TestMain that has its own cleanup to
// do: it returns the code to exit with.
func Run(m *testing.M) int { return run(m) }

func run(m *testing.M) int {
	if os.Getenv(EnvURL) != "" {
		defer closeAdmin()
		return m.Run()
	}
	ctx := context.Background()
	c, err := StartCluster(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
		return 1
	}
	state.mu.Lock()
	state.mainURL = c.URL()
	state.mu.Unlock()

	var once sync.Once
	var stopErr error
	stop := func() {
		once.Do(func() {
			closeAdmin()
			stopErr = c.Stop(ctx)
		})
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		fmt.Fprintf(os.Stderr, "pgtest: %v: stopping the test cluster\n", sig)
		stop()
		os.Exit(128 + int(sig.(syscall.Signal)))
	}()

	code := m.Run()
	signal.Stop(sigs)
	stop()
	if stopErr != nil {
		fmt.Fprintf(os.Stderr, "pgtest: %v\n", stopErr)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// ServerURL returns the connection string of the server in use, for tests
// that create roles or databases themselves: CLEARING_TEST_DATABASE_URL, or
// else the cluster that Main started. It is empty when there is neither.
func ServerURL() string {
	if u := os.Getenv(EnvURL); u != "" {
		return u
	}
	state.mu.Lock()
	defer state.mu.Unlock()
	return state.mainURL
}

// ConnString creates a database for this test, cloned from the migrated
// template, and returns its connection string. The database is dropped
// (WITH (FORCE), so connections left open do not stop it) when the test
// ends.
func ConnString(t testing.TB) string {
	t.Helper()
	server := ServerURL()
	if server == "" {
		t.Fatalf("pgtest: no PostgreSQL server: set %s, or call pgtest.Main from TestMain", EnvURL)
	}
	admin, workers, tmpl, err := prepare(server)
	if err != nil {
		t.Fatal(err)
	}
	name := databaseName(t.Name())
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	// On Citus the template is on every node, and so is each copy: the
	// coordinator's copy names its shards, which the workers' copies hold.
	create := fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", pgx.Identifier{name}.Sanitize(), pgx.Identifier{tmpl}.Sanitize())
	if err := onEach(ctx, append([]*pgxpool.Pool{admin}, workers...), create); err != nil {
		t.Fatalf("pgtest: %s: %v", create, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		drop := fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", pgx.Identifier{name}.Sanitize())
		// The coordinator's first, so that none of its sessions still use
		// the workers' copies. WITH (FORCE) ends client sessions, not
		// Citus's maintenance daemon, which closeTemplate ends too.
		for i, p := range append([]*pgxpool.Pool{admin}, workers...) {
			if len(workers) > 0 {
				if err := closeTemplate(ctx, p, name); err != nil {
					t.Errorf("pgtest: %v", err)
				}
			}
			if _, err := p.Exec(ctx, drop); err != nil {
				t.Errorf("pgtest: %s on node %d: %v", drop, i, err)
			}
		}
	})
	// CREATE DATABASE ... TEMPLATE copies no ALTER DATABASE ... SET; the
	// copy gets its template's, as the database the migrations left (on
	// Citus, citus.enable_unsafe_triggers, which migrate --distribute sets).
	for _, p := range append([]*pgxpool.Pool{admin}, workers...) {
		if err := copySettings(ctx, p, tmpl, name); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := withDatabase(server, name)
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

// copySettings gives database the settings that ALTER DATABASE ... SET
// made for template (for every role), on the server of pool.
func copySettings(ctx context.Context, pool *pgxpool.Pool, template, database string) error {
	rows, err := pool.Query(ctx, `
SELECT format('ALTER DATABASE %I SET %I = %L', $2::text, split_part(c, '=', 1), substr(c, strpos(c, '=') + 1))
  FROM pg_db_role_setting s JOIN pg_database d ON d.oid = s.setdatabase, unnest(s.setconfig) c
 WHERE d.datname = $1 AND s.setrole = 0`, template, database)
	if err != nil {
		return fmt.Errorf("pgtest: the template's settings: %w", err)
	}
	stmts, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("pgtest: the template's settings: %w", err)
	}
	for _, sql := range stmts {
		if _, err := pool.Exec(ctx, sql); err != nil {
			return fmt.Errorf("pgtest: %s: %w", sql, err)
		}
	}
	return nil
}

// Pool returns a pool on a fresh database for this test (see ConnString).
// The pool is closed when the test ends, before its database is dropped.
func Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), ConnString(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// prepare opens the administrative pools (the server's, and on a Citus
// coordinator its workers') and makes sure the template exists, once per
// test binary and server.
func prepare(server string) (*pgxpool.Pool, []*pgxpool.Pool, string, error) {
	state.mu.Lock()
	defer state.mu.Unlock()
	if state.admin == nil || state.adminURL != server {
		closeAdminLocked()
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		pool, err := pgxpool.New(ctx, server)
		if err != nil {
			return nil, nil, "", fmt.Errorf("pgtest: %w", err)
		}
		urls, err := citusWorkers(ctx, pool, server)
		if err != nil {
			pool.Close()
			return nil, nil, "", fmt.Errorf("pgtest: the Citus workers: %w", err)
		}
		var workers []*pgxpool.Pool
		for _, u := range urls {
			w, err := pgxpool.New(ctx, u)
			if err != nil {
				pool.Close()
				return nil, nil, "", fmt.Errorf("pgtest: %w", err)
			}
			workers = append(workers, w)
		}
		state.admin, state.adminURL, state.workers, state.tmplBuilt = pool, server, workers, false
	}
	if !state.tmplBuilt {
		state.tmplName = templateName()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		state.tmplErr = buildTemplate(ctx, server, state.workers, state.tmplName)
		state.tmplBuilt = true
	}
	return state.admin, state.workers, state.tmplName, state.tmplErr
}

// Citus reports whether the tests' server is a Citus coordinator, on which
// every test database is distributed by tenant. It builds the template, and
// fails the test when there is no server.
func Citus(t testing.TB) bool {
	t.Helper()
	server := ServerURL()
	if server == "" {
		t.Fatalf("pgtest: no PostgreSQL server: set %s, or call pgtest.Main from TestMain", EnvURL)
	}
	_, workers, _, err := prepare(server)
	if err != nil {
		t.Fatal(err)
	}
	return len(workers) > 0
}

// onEach runs sql on each pool at the same time.
func onEach(ctx context.Context, pools []*pgxpool.Pool, sql string) error {
	errs := make([]error, len(pools))
	var wg sync.WaitGroup
	for i, p := range pools {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = p.Exec(ctx, sql)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// closeAdmin closes the administrative pools, so that a cluster can be
// stopped without cutting connections off.
func closeAdmin() {
	state.mu.Lock()
	defer state.mu.Unlock()
	closeAdminLocked()
}

func closeAdminLocked() {
	if state.admin != nil {
		state.admin.Close()
		state.admin = nil
	}
	for _, w := range state.workers {
		w.Close()
	}
	state.workers = nil
}

// databaseName makes a database name that no other test, in this binary or
// another one sharing the server, can have. It carries the test's name, so
// that a database left behind by a killed run can be traced.
func databaseName(testName string) string {
	var b [4]byte
	rand.Read(b[:])
	name := "test_" + hex.EncodeToString(b[:]) + "_" + strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return '_'
	}, testName)
	// PostgreSQL truncates names to 63 bytes.
	return name[:min(len(name), 63)]
}

// withDatabase returns connString pointed at another database. It accepts
// both URLs and keyword/value strings.
func withDatabase(connString, database string) (string, error) {
	if strings.HasPrefix(connString, "postgres://") || strings.HasPrefix(connString, "postgresql://") {
		u, err := url.Parse(connString)
		if err != nil {
			return "", fmt.Errorf("pgtest: %s is not a valid URL: %w", EnvURL, err)
		}
		u.Path, u.RawPath = "/"+database, ""
		q := u.Query()
		q.Del("dbname")
		u.RawQuery = q.Encode()
		return u.String(), nil
	}
	// In a keyword/value string the last setting of a keyword wins.
	return connString + " dbname='" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(database) + "'", nil
}

// AsUser returns connString with its user replaced, for tests that connect
// as a role of their own (to prove what the database refuses to a role).
func AsUser(connString, user string) (string, error) {
	if strings.HasPrefix(connString, "postgres://") || strings.HasPrefix(connString, "postgresql://") {
		u, err := url.Parse(connString)
		if err != nil {
			return "", fmt.Errorf("pgtest: %q is not a valid URL: %w", connString, err)
		}
		u.User = url.User(user)
		q := u.Query()
		q.Del("user")
		u.RawQuery = q.Encode()
		return u.String(), nil
	}
	return connString + " user='" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(user) + "'", nil
}

// WithDatabase returns connString pointed at another database, for tests
// that make a database of their own (owned by a role of theirs, say).
func WithDatabase(connString, database string) (string, error) {
	return withDatabase(connString, database)
}
