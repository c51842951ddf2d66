package pgtest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clearing-dev/clearing/internal/db/embedded"
)

// CitusWorkers is how many workers StartCitusCluster starts beside its
// coordinator.
const CitusWorkers = 2

// CitusShards is how many shards a test database gives each distributed
// table. Citus's default (32) makes every test database a few thousand
// tables on each worker, which a template copies for every test; four keep
// the tenants of a test on different shards and nodes.
const CitusShards = 4

// ErrNoCitus means that the Citus extension is not installed for the
// server binaries the cluster would use.
var ErrNoCitus = errors.New("pgtest: the Citus extension is not installed for this PostgreSQL")

// citusSettings are the servers' settings in a Citus cluster. The nodes
// talk over the loopback address without TLS, and Citus sends no
// statistics out.
var citusSettings = []string{
	"shared_preload_libraries = 'citus'",
	"citus.node_conninfo = 'sslmode=disable'",
	"citus.enable_statistics_collection = off",
	"max_connections = 300",
}

// StartCitusCluster creates and starts a throw-away Citus cluster: a
// coordinator and CitusWorkers workers, each a server of its own on a free
// port of 127.0.0.1, with the extension and the workers registered in the
// postgres database. URL names the coordinator; pgtest finds the workers
// from there. Without the extension it returns an error wrapping
// ErrNoCitus.
func StartCitusCluster(ctx context.Context) (*Cluster, error) {
	dir, err := os.MkdirTemp("", "clearing-citus-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chmod(dir, 0o711); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: %w", err)
		}
	}
	c := &Cluster{dir: dir, nodes: make([]*embedded.Cluster, 1+CitusWorkers)}
	ports, err := freePorts(len(c.nodes))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// The servers start side by side: initdb is most of the time.
	errs := make([]error, len(c.nodes))
	var wg sync.WaitGroup
	for i := range c.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.nodes[i], errs[i] = embedded.Start(ctx, embedded.Options{
				Home:      filepath.Join(dir, fmt.Sprintf("node%d", i)),
				Database:  "postgres",
				Ephemeral: true,
				Port:      ports[i],
				Loopback:  true,
				Settings:  citusSettings,
				Logger:    slog.New(slog.DiscardHandler),
			})
		}()
	}
	wg.Wait()
	fail := func(err error) (*Cluster, error) {
		for _, n := range c.nodes {
			if n != nil {
				n.Close(ctx)
			}
		}
		os.RemoveAll(dir)
		return nil, err
	}
	if err := errors.Join(errs...); err != nil {
		if strings.Contains(err.Error(), `could not access file "citus"`) {
			return fail(fmt.Errorf("%w (shared_preload_libraries = 'citus' fails: %v)", ErrNoCitus, err))
		}
		return fail(fmt.Errorf("pgtest: throw-away Citus cluster: %w", err))
	}
	c.url = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", ports[0])
	var workers []string
	for _, p := range ports[1:] {
		workers = append(workers, fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", p))
	}
	if err := citusDatabase(ctx, c.url, workers, "postgres"); err != nil {
		return fail(err)
	}
	return c, nil
}

// freePorts asks the kernel for n free ports of 127.0.0.1. Another process
// could take one before the server binds it; the server then fails to
// start, and so does the run, saying why.
func freePorts(n int) ([]int, error) {
	var ports []int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("pgtest: a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// citusDatabase makes database a Citus database: the extension on the
// coordinator and on every worker, and the workers registered with the
// coordinator. Citus keeps its nodes per database (pg_dist_node), so each
// database needs this once; a template's copies have it.
func citusDatabase(ctx context.Context, coordinator string, workers []string, database string) error {
	coord, err := withDatabase(coordinator, database)
	if err != nil {
		return err
	}
	for _, server := range append([]string{coordinator}, workers...) {
		target, err := withDatabase(server, database)
		if err != nil {
			return err
		}
		if err := execOn(ctx, target, `CREATE EXTENSION IF NOT EXISTS citus`); err != nil {
			return err
		}
	}
	host, port, err := hostPort(coordinator)
	if err != nil {
		return err
	}
	stmts := []string{fmt.Sprintf(`SELECT citus_set_coordinator_host(%s, %d)`, quoteLiteral(host), port)}
	for _, w := range workers {
		host, port, err := hostPort(w)
		if err != nil {
			return err
		}
		stmts = append(stmts, fmt.Sprintf(`SELECT citus_add_node(%s, %d)`, quoteLiteral(host), port))
	}
	return execOn(ctx, coord, stmts...)
}

// execOn runs statements on one connection to connString.
func execOn(ctx context.Context, connString string, stmts ...string) error {
	conn, err := pgx.Connect(ctx, connString)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, sql := range stmts {
		if _, err := conn.Exec(ctx, sql); err != nil {
			return fmt.Errorf("pgtest: %s on %s: %w", sql, redact(connString), err)
		}
	}
	return nil
}

// hostPort is the host and port a connection string names.
func hostPort(connString string) (string, uint16, error) {
	cfg, err := pgconn.ParseConfig(connString)
	if err != nil {
		return "", 0, fmt.Errorf("pgtest: %w", err)
	}
	return cfg.Host, cfg.Port, nil
}

// redact names a server by host and port only.
func redact(connString string) string {
	host, port, err := hostPort(connString)
	if err != nil {
		return "a server"
	}
	return fmt.Sprintf("%s:%d", host, port)
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// citusWorkers returns the connection strings of the workers registered in
// the coordinator's database that admin is connected to, or none when that
// database has no Citus: then the server is a single PostgreSQL.
func citusWorkers(ctx context.Context, admin interface {
	QueryRow(context.Context, string, ...any) pgx.Row
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, server string) ([]string, error) {
	var citus bool
	if err := admin.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')`).Scan(&citus); err != nil || !citus {
		return nil, err
	}
	rows, err := admin.Query(ctx, `SELECT nodename, nodeport FROM pg_dist_node WHERE groupid <> 0 AND noderole = 'primary' ORDER BY nodeid`)
	if err != nil {
		return nil, err
	}
	type node struct {
		Name string
		Port int
	}
	nodes, err := pgx.CollectRows(rows, pgx.RowToStructByPos[node])
	if err != nil {
		return nil, err
	}
	cfg, err := pgconn.ParseConfig(server)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range nodes {
		out = append(out, fmt.Sprintf("postgres://%s@%s:%d/postgres?sslmode=disable", cfg.User, n.Name, n.Port))
	}
	return out, nil
}

// querier is a connection or a pool.
type querier interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
	QueryRow(context.Context, string, ...any) pgx.Row
}

// closeTemplate makes database on one server ready to be a template's
// copy source: nobody may connect any more, and the sessions still in it
// (Citus's maintenance daemon, the coordinator's cached connections to the
// workers) are ended, since CREATE DATABASE ... TEMPLATE and RENAME refuse
// a database anyone is connected to.
func closeTemplate(ctx context.Context, conn querier, database string) error {
	id := pgx.Identifier{database}.Sanitize()
	if _, err := conn.Exec(ctx, "ALTER DATABASE "+id+" WITH ALLOW_CONNECTIONS false"); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var left int
		err := conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		                            WHERE datname = $1 AND pid <> pg_backend_pid()`, database).Scan(&left)
		if err != nil {
			return fmt.Errorf("pgtest: %w", err)
		}
		if left == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgtest: %d sessions stay connected to %s", left, database)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// EmptyCitusDatabase creates a database for this test on the Citus
// coordinator and every worker, with the extension and the workers
// registered but no schema, and returns its connection string; it is
// dropped when the test ends. The test is skipped on one PostgreSQL.
func EmptyCitusDatabase(t testing.TB) string {
	t.Helper()
	server := ServerURL()
	if server == "" {
		t.Fatalf("pgtest: no PostgreSQL server: set %s, or call pgtest.Main from TestMain", EnvURL)
	}
	admin, workers, _, err := prepare(server)
	if err != nil {
		t.Fatal(err)
	}
	if len(workers) == 0 {
		t.Skip("not a Citus cluster: run it with make test-citus")
	}
	name := databaseName(t.Name())
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	pools := append([]*pgxpool.Pool{admin}, workers...)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
		defer cancel()
		for _, p := range pools {
			if err := closeTemplate(ctx, p, name); err != nil {
				t.Errorf("pgtest: %v", err)
			}
			if _, err := p.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
				t.Errorf("pgtest: %v", err)
			}
		}
	})
	if err := onEach(ctx, pools, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, w := range workers {
		urls = append(urls, w.Config().ConnString())
	}
	if err := citusDatabase(ctx, server, urls, name); err != nil {
		t.Fatal(err)
	}
	conn, err := withDatabase(server, name)
	if err != nil {
		t.Fatal(err)
	}
	return conn
}
