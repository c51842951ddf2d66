package embedded_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clearing-dev/clearing/internal/db/embedded"
)

// The tests start real clusters in throw-away homes. Some need a second
// process (to kill it, or to prove that locks work across processes); they
// run this test binary again with helperEnv set, and init below turns it
// into that process before any test runs.
const (
	helperEnv     = "CLEARING_EMBEDDED_TEST_HELPER"
	helperHomeEnv = "CLEARING_EMBEDDED_TEST_HOME"
)

func init() {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		return
	}
	if err := runHelper(mode, os.Getenv(helperHomeEnv)); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// runHelper is the body of a helper process. "hold" starts the cluster,
// says "ready" and waits to be killed; "use" starts it, queries it, waits a
// moment so that users overlap, and closes.
func runHelper(mode, home string) error {
	ctx := context.Background()
	e, err := embedded.Start(ctx, embedded.Options{Home: home})
	if err != nil {
		return err
	}
	if err := ping(ctx, e.ConnString()); err != nil {
		return err
	}
	switch mode {
	case "hold":
		fmt.Println("ready")
		select {}
	case "use":
		time.Sleep(time.Duration(os.Getpid()%50) * time.Millisecond)
		return e.Close(ctx)
	}
	return fmt.Errorf("unknown mode %q", mode)
}

// helper starts this test binary as a helper process on home.
func helper(t *testing.T, mode, home string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, helperHomeEnv+"="+home)
	return cmd
}

// testHome returns a home that does not exist yet, in a temporary folder
// that the server's user can pass through when the tests run as root. Any
// server a failed test leaves running there is shut down.
func testHome(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if os.Geteuid() == 0 {
		// t.TempDir's folders are 0700 and root's; the postgres user must
		// pass through them to reach the cluster.
		for p := dir; p != filepath.Clean(os.TempDir()) && p != "/"; p = filepath.Dir(p) {
			if err := os.Chmod(p, 0o711); err != nil {
				t.Fatal(err)
			}
		}
	}
	home := filepath.Join(dir, "home")
	t.Cleanup(func() { killLeftover(home) })
	return home
}

// killLeftover shuts down, without a checkpoint, a server that a failed test
// left running in home, so that the temporary folder can be removed.
func killLeftover(home string) {
	pid, err := postmasterPID(home)
	if err != nil {
		return
	}
	syscall.Kill(pid, syscall.SIGQUIT)
	for i := 0; i < 200 && serverRunning(home); i++ {
		time.Sleep(10 * time.Millisecond)
	}
}

// postmasterPID reads the server's process id from its lock file.
func postmasterPID(home string) (int, error) {
	b, err := os.ReadFile(filepath.Join(home, "pg", "data", "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strconv.Atoi(line)
}

// serverRunning reports whether the cluster's server holds its lock file.
func serverRunning(home string) bool {
	_, err := os.Stat(filepath.Join(home, "pg", "data", "postmaster.pid"))
	return !errors.Is(err, fs.ErrNotExist)
}

// start is Start for a test; the cluster is closed when the test
// ends if the test has not closed it.
func start(t testing.TB, home string) *embedded.Cluster {
	t.Helper()
	e, err := embedded.Start(context.Background(), embedded.Options{Home: home})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	return e
}

// ping connects to connString and runs a query.
func ping(ctx context.Context, connString string) error {
	conn, err := pgx.Connect(ctx, connString)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var one int
	return conn.QueryRow(ctx, "SELECT 1").Scan(&one)
}

// queryString runs a query that returns one text value.
func queryString(t *testing.T, connString, sql string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, connString)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var s string
	if err := conn.QueryRow(ctx, sql).Scan(&s); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return s
}

// startedAt identifies the server instance: a restarted server has a new
// start time.
func startedAt(t *testing.T, e *embedded.Cluster) string {
	t.Helper()
	return queryString(t, e.ConnString(), "SELECT pg_postmaster_start_time()::text")
}

// waitForLine reads lines from the helper's output until want.
func waitForLine(t *testing.T, r *bufio.Reader, want string) {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("helper ended before saying %q: %v", want, err)
		}
		if strings.TrimSpace(line) == want {
			return
		}
	}
}

// sleepAsServerUser starts a long sleep in dir as the user the server would
// run as, so that its process id looks like a live process of that user.
func sleepAsServerUser(t *testing.T, dir string) int {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	cmd.Dir = dir
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skipf("no postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd.Process.Pid
}

// chownAll gives everything under dir to the named OS user.
func chownAll(t *testing.T, dir, name string) {
	t.Helper()
	u, err := user.Lookup(name)
	if err != nil {
		t.Skipf("no %s user: %v", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	err = filepath.WalkDir(dir, func(path string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, uid, gid)
	})
	if err != nil {
		t.Fatal(err)
	}
}
