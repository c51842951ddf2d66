package pgtest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/clearing-dev/clearing/internal/db"
)

func TestMain(m *testing.M) {
	Main(m)
}

func TestParallelTestsGetSeparateMigratedDatabases(t *testing.T) {
	var mu sync.Mutex
	names := map[string]string{}
	t.Run("group", func(t *testing.T) {
		for _, who := range []string{"first", "second"} {
			t.Run(who, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				pool := Pool(t)
				have, want, err := db.SchemaVersion(ctx, pool)
				if err != nil {
					t.Fatal(err)
				}
				if have == 0 || have != want {
					t.Errorf("schema version %d, want %d", have, want)
				}
				// The same table in both databases: shared, the second
				// CREATE would fail.
				if _, err := pool.Exec(ctx, "CREATE TABLE probe (who text)"); err != nil {
					t.Fatal(err)
				}
				var name string
				if err := pool.QueryRow(ctx, "SELECT current_database()").Scan(&name); err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				names[who] = name
				mu.Unlock()
			})
		}
	})
	if len(names) != 2 || names["first"] == names["second"] {
		t.Errorf("databases %v, want two different ones", names)
	}
}

func TestDatabaseIsDroppedAfterItsTest(t *testing.T) {
	var name string
	t.Run("user", func(t *testing.T) {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, ConnString(t))
		if err != nil {
			t.Fatal(err)
		}
		// Left open on purpose: the drop must not wait for it.
		if err := conn.QueryRow(ctx, "SELECT current_database()").Scan(&name); err != nil {
			t.Fatal(err)
		}
	})
	if name == "" {
		t.Fatal("the subtest learnt no database name")
	}
	if databaseExists(t, name) {
		t.Errorf("database %s still exists after its test", name)
	}
}

func TestTemplateRefusesConnections(t *testing.T) {
	Pool(t) // builds the template
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, ServerURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var allow, template bool
	err = conn.QueryRow(ctx, "SELECT datallowconn, datistemplate FROM pg_database WHERE datname = $1", templateName()).
		Scan(&allow, &template)
	if err != nil {
		t.Fatal(err)
	}
	if allow || !template {
		t.Errorf("template allows connections: %v, is a template: %v", allow, template)
	}
}

func TestHalfBuiltTemplateIsNotReused(t *testing.T) {
	ctx := context.Background()
	name := fmt.Sprintf("clearing_tmpl_crash_%s", databaseName("")[5:13])
	t.Cleanup(func() { dropTemplate(t, name) })
	// What a build killed after CREATE DATABASE leaves behind.
	admin(t, "CREATE DATABASE "+pgx.Identifier{name + "_build"}.Sanitize())
	conn := connect(t, name+"_build")
	if _, err := conn.Exec(ctx, "CREATE TABLE half_built (n int)"); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)

	if err := buildTemplate(ctx, ServerURL(), nil, name); err != nil {
		t.Fatal(err)
	}
	clone := databaseName(t.Name())
	admin(t, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", pgx.Identifier{clone}.Sanitize(), pgx.Identifier{name}.Sanitize()))
	t.Cleanup(func() { admin(t, "DROP DATABASE "+pgx.Identifier{clone}.Sanitize()+" WITH (FORCE)") })
	conn = connect(t, clone)
	defer conn.Close(ctx)
	var halfBuilt, migrated bool
	err := conn.QueryRow(ctx, "SELECT to_regclass('half_built') IS NOT NULL, to_regclass('clearing_schema_version') IS NOT NULL").
		Scan(&halfBuilt, &migrated)
	if err != nil {
		t.Fatal(err)
	}
	if halfBuilt || !migrated {
		t.Errorf("template holds the half-built table: %v, is migrated: %v", halfBuilt, migrated)
	}
	if databaseExists(t, name+"_build") {
		t.Errorf("the half-built database is still there")
	}
}

func TestConcurrentTemplateBuildsBuildOnce(t *testing.T) {
	name := fmt.Sprintf("clearing_tmpl_race_%s", databaseName("")[5:13])
	t.Cleanup(func() { dropTemplate(t, name) })
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() { errs <- buildTemplate(context.Background(), ServerURL(), nil, name) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if !databaseExists(t, name) {
		t.Error("no template after concurrent builds")
	}
}

func TestWithDatabase(t *testing.T) {
	tests := []struct{ name, in string }{
		{"URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"},
		{"URL without database", "postgresql://u@h"},
		{"URL with dbname parameter", "postgres://u@h/a?dbname=b&sslmode=disable"},
		{"keyword/value", "host=/tmp/x port=5432 user=postgres dbname=postgres"},
		{"keyword/value without database", "host='/tmp/it\\'s' user=postgres"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := withDatabase(tc.in, "test_ab12_x")
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := pgconn.ParseConfig(out)
			if err != nil {
				t.Fatalf("%s: %v", out, err)
			}
			if cfg.Database != "test_ab12_x" {
				t.Errorf("%s names database %q", out, cfg.Database)
			}
			in, _ := pgconn.ParseConfig(tc.in)
			if cfg.Host != in.Host || cfg.User != in.User {
				t.Errorf("%s changed host or user: %q %q", out, cfg.Host, cfg.User)
			}
		})
	}
}

func TestDatabaseName(t *testing.T) {
	a, b := databaseName("TestX/sub case"), databaseName("TestX/sub case")
	if a == b {
		t.Errorf("two calls gave the same name %s", a)
	}
	if want := "_testx_sub_case"; a[len(a)-len(want):] != want {
		t.Errorf("name %s does not end with %s", a, want)
	}
	if long := databaseName(string(make([]byte, 200))); len(long) != 63 {
		t.Errorf("name of %d bytes, want 63", len(long))
	}
}

// admin runs one statement on the server's own database.
func admin(t *testing.T, sql string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, ServerURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// connect opens a connection to one database of the server.
func connect(t *testing.T, database string) *pgx.Conn {
	t.Helper()
	s, err := withDatabase(ServerURL(), database)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	return conn
}

func databaseExists(t *testing.T, name string) bool {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, ServerURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	return exists
}

// dropTemplate removes a template made by a test.
func dropTemplate(t *testing.T, name string) {
	id := pgx.Identifier{name}.Sanitize()
	if databaseExists(t, name) {
		admin(t, "ALTER DATABASE "+id+" WITH IS_TEMPLATE false")
		admin(t, "DROP DATABASE "+id)
	}
	admin(t, "DROP DATABASE IF EXISTS "+pgx.Identifier{name + "_build"}.Sanitize())
}
