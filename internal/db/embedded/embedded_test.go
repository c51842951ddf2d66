package embedded_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clearing-dev/clearing/internal/db/embedded"
)

func TestDefaultHome(t *testing.T) {
	userHome, _ := os.UserHomeDir()
	personal := filepath.Join(userHome, ".local", "share", "clearing")
	if os.Geteuid() == 0 {
		personal = "/var/lib/clearing"
	}
	tests := []struct {
		name, env, want string
	}{
		{"CLEARING_HOME wins", "/srv/clearing", "/srv/clearing"},
		{"CLEARING_HOME is made absolute", "rel/home", filepath.Join(mustGetwd(t), "rel/home")},
		{"default", "", personal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("CLEARING_HOME", tc.env)
			got, err := embedded.DefaultHome()
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("DefaultHome() = %q, want %q", got, tc.want)
			}
		})
	}
}

func mustGetwd(t *testing.T) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

func TestStartCreatesClusterOnFirstUse(t *testing.T) {
	home := testHome(t)
	ctx := context.Background()
	e := start(t, home)

	if _, err := os.Stat(filepath.Join(home, "pg", "data", "PG_VERSION")); err != nil {
		t.Errorf("no cluster after the first start: %v", err)
	}
	settings := map[string]string{
		"SELECT current_database()":      "clearing",
		"SHOW listen_addresses":          "",
		"SHOW unix_socket_directories":   `"` + filepath.Join(home, "pg") + `"`,
		"SHOW server_encoding":           "UTF8",
		"SHOW lc_collate":                "C",
		"SHOW fsync":                     "on",
		"SHOW data_checksums":            "on",
		"SHOW TimeZone":                  "UTC",
		"SELECT current_setting('port')": "5432",
		"SHOW unix_socket_permissions":   "0700",
		"SELECT count(*)::text FROM pg_hba_file_rules WHERE type <> 'local'": "0",
	}
	for sql, want := range settings {
		if got := queryString(t, e.ConnString(), sql); got != want {
			t.Errorf("%s = %q, want %q", sql, got, want)
		}
	}
	for _, dir := range []string{filepath.Join(home, "pg"), filepath.Join(home, "pg", "data")} {
		if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, %v; want 0700", dir, st.Mode().Perm(), err)
		}
	}
	if st, err := os.Stat(filepath.Join(home, "pg", "server.log")); err != nil || st.Size() == 0 {
		t.Errorf("the server log in the home is missing or empty: %v", err)
	}

	// What is written survives a stop and a start, which must not initdb
	// again.
	execSQL(t, e.ConnString(), "CREATE TABLE kept (n int); INSERT INTO kept VALUES (42)")
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if serverRunning(home) {
		t.Fatal("the server still runs after its only user closed")
	}
	e2 := start(t, home)
	if got := queryString(t, e2.ConnString(), "SELECT n::text FROM kept"); got != "42" {
		t.Errorf("after a restart the table holds %q, want 42", got)
	}
}

func TestEmbeddedServerIsSharedAndStoppedByItsLastUser(t *testing.T) {
	home := testHome(t)
	ctx := context.Background()
	first := start(t, home)
	second := start(t, home)
	if a, b := startedAt(t, first), startedAt(t, second); a != b {
		t.Fatalf("the second user started its own server (%s, then %s)", a, b)
	}
	if err := first.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ping(ctx, second.ConnString()); err != nil {
		t.Fatalf("the first Close stopped the server the second user still uses: %v", err)
	}
	if err := first.Close(ctx); err != nil {
		t.Fatalf("a second Close of the same user: %v", err)
	}
	if err := ping(ctx, second.ConnString()); err != nil {
		t.Fatalf("a repeated Close counted as another user leaving: %v", err)
	}
	if err := second.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if serverRunning(home) {
		t.Fatal("the last Close left the server running")
	}
}

func TestEmbeddedConcurrentFirstUseInOneProcess(t *testing.T) {
	home := testHome(t)
	ctx := context.Background()
	const users = 8
	var wg sync.WaitGroup
	errs := make(chan error, users)
	for range users {
		wg.Go(func() {
			e, err := embedded.Start(ctx, embedded.Options{Home: home})
			if err != nil {
				errs <- err
				return
			}
			if err := ping(ctx, e.ConnString()); err != nil {
				errs <- err
			}
			if err := e.Close(ctx); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if serverRunning(home) {
		t.Error("the server still runs after every user closed")
	}
}

func TestEmbeddedConcurrentProcesses(t *testing.T) {
	home := testHome(t)
	const users = 8
	cmds := make([]*[]byte, users)
	var wg sync.WaitGroup
	for i := range users {
		cmd := helper(t, "use", home)
		wg.Go(func() {
			out, err := cmd.CombinedOutput()
			if err != nil {
				out = append(out, []byte(err.Error())...)
				cmds[i] = &out
			}
		})
	}
	wg.Wait()
	for i, out := range cmds {
		if out != nil {
			t.Errorf("process %d failed: %s", i, *out)
		}
	}
	if serverRunning(home) {
		t.Error("the server still runs after every process closed")
	}
}

func TestEmbeddedRecoversFromKilledUser(t *testing.T) {
	home := testHome(t)
	ctx := context.Background()
	cmd := helper(t, "hold", home)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitForLine(t, bufio.NewReader(stdout), "ready")
	before, err := postmasterPID(home)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	// The killed user's server is still running; the next command uses it
	// and, as its last user, stops it.
	e := start(t, home)
	after, err := postmasterPID(home)
	if err != nil || after != before {
		t.Fatalf("server %d after the kill, %d before (%v); want the same server reused", after, before, err)
	}
	if err := ping(ctx, e.ConnString()); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if serverRunning(home) {
		t.Fatal("the server left by the killed user still runs after the next user closed")
	}
}

func TestEmbeddedRecoversFromKilledServer(t *testing.T) {
	home := testHome(t)
	ctx := context.Background()
	e := start(t, home)
	execSQL(t, e.ConnString(), "CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)")
	pid, err := postmasterPID(home)
	if err != nil {
		t.Fatal(err)
	}
	// Killing the server leaves postmaster.pid behind and, for a moment,
	// children that still hold its shared memory.
	syscall.Kill(pid, syscall.SIGKILL)
	if err := e.Close(ctx); err != nil {
		t.Fatalf("Close after the server died: %v", err)
	}
	e2 := start(t, home)
	if got := queryString(t, e2.ConnString(), "SELECT n::text FROM kept"); got != "7" {
		t.Errorf("after crash recovery the table holds %q, want 7", got)
	}
}

func TestEmbeddedRemovesLockFileOfReusedProcessID(t *testing.T) {
	home := testHome(t)
	ctx := context.Background()
	e := start(t, home)
	if err := e.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// After a reboot the process id in a stale postmaster.pid may belong to
	// an unrelated live process; the server would refuse to start.
	sleeper := sleepAsServerUser(t, "/")
	pidFile := filepath.Join(home, "pg", "data", "postmaster.pid")
	stale := []byte(strconv.Itoa(sleeper) + "\n" + filepath.Join(home, "pg", "data") + "\n")
	if err := os.WriteFile(pidFile, stale, 0o600); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Dir(pidFile)); err == nil {
		sys := st.Sys().(*syscall.Stat_t)
		os.Chown(pidFile, int(sys.Uid), int(sys.Gid))
	}
	e2 := start(t, home)
	if err := ping(ctx, e2.ConnString()); err != nil {
		t.Fatal(err)
	}
	if pid, _ := postmasterPID(home); pid == sleeper {
		t.Fatal("postmaster.pid still names the unrelated process")
	}
}

// execSQL runs statements on connString.
func execSQL(t *testing.T, connString, sql string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, connString)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func TestEmbeddedWaitsForOrphanedChildrenOfKilledServer(t *testing.T) {
	home := testHome(t)
	ctx := context.Background()
	e := start(t, home)
	pid, err := postmasterPID(home)
	if err != nil {
		t.Fatal(err)
	}
	// A backend busy with a query does not notice at once that its server
	// died, and holds the cluster's shared memory until it does.
	busy := make(chan error, 1)
	go func() {
		conn, err := pgx.Connect(ctx, e.ConnString())
		if err != nil {
			busy <- err
			return
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, "SELECT count(*) FROM generate_series(1, 20000000)")
		busy <- err
	}()
	time.Sleep(300 * time.Millisecond)
	syscall.Kill(pid, syscall.SIGKILL)
	if err := e.Close(ctx); err != nil {
		t.Fatalf("Close after the server died: %v", err)
	}
	e2 := start(t, home)
	if err := ping(ctx, e2.ConnString()); err != nil {
		t.Fatal(err)
	}
	<-busy
}

func TestEmbeddedHomeWithSpaceAndQuote(t *testing.T) {
	home := filepath.Join(testHome(t), `it's a home`)
	e := start(t, home)
	if err := ping(context.Background(), e.ConnString()); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if serverRunning(home) {
		t.Fatal("the server still runs after its only user closed")
	}
}

func TestEmbeddedNeverRemovesLockFileOfItsOwnLiveServer(t *testing.T) {
	home := testHome(t)
	e := start(t, home)
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A live process working in the cluster's folder cannot be told apart
	// from a server that is starting or hangs: its lock file stays, and the
	// start fails, naming the file.
	data := filepath.Join(home, "pg", "data")
	sleeper := sleepAsServerUser(t, data)
	pidFile := filepath.Join(data, "postmaster.pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(sleeper)+"\n"+data+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := embedded.Start(context.Background(), embedded.Options{Home: home, Timeout: time.Second})
	if !errors.Is(err, embedded.ErrServer) {
		t.Fatalf("error %v does not wrap ErrServer", err)
	}
	if want := pidFile + " names process " + strconv.Itoa(sleeper); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	if pid, err := postmasterPID(home); err != nil || pid != sleeper {
		t.Errorf("postmaster.pid names %d (%v), want the live process %d left alone", pid, err, sleeper)
	}
	os.Remove(pidFile)
}
