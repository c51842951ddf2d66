package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/clearing-dev/clearing/internal/pgtest"
)

// The tests run this test binary again in one of two roles: as pgtestcluster
// itself ("main"), or as the command pgtestcluster runs ("child"), which
// queries the server it was given, writes its connection string to
// childOutEnv's file, and then exits with childExitEnv's code or, for
// "hang", waits to be signalled.
const (
	roleEnv      = "WITHCLUSTER_TEST_ROLE"
	childOutEnv  = "WITHCLUSTER_TEST_OUT"
	childExitEnv = "WITHCLUSTER_TEST_EXIT"
)

func init() {
	switch os.Getenv(roleEnv) {
	case "main":
		main()
	case "child":
		os.Exit(child())
	}
}

func child() int {
	url := os.Getenv(pgtest.EnvURL)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 99
	}
	conn.Close(ctx)
	if err := os.WriteFile(os.Getenv(childOutEnv), []byte(url), 0o600); err != nil {
		return 98
	}
	if os.Getenv(childExitEnv) == "hang" {
		time.Sleep(time.Hour)
	}
	code, _ := strconv.Atoi(os.Getenv(childExitEnv))
	return code
}

// childCommand is the command line that runs this binary as the child.
func childCommand(out, exit string) []string {
	return []string{"--", "env", roleEnv + "=child", childOutEnv + "=" + out, childExitEnv + "=" + exit, os.Args[0], "-test.run=^$"}
}

// clusterGone checks that the cluster behind connString no longer runs and
// that its folder was deleted.
func clusterGone(t *testing.T, connString string) {
	t.Helper()
	cfg, err := pgconn.ParseConfig(connString)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Dir(cfg.Host)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the cluster's folder %s is still there (%v)", filepath.Dir(cfg.Host), err)
	}
	if conn, err := pgx.Connect(context.Background(), connString); err == nil {
		conn.Close(context.Background())
		t.Error("the cluster still answers")
	}
}

func TestUsage(t *testing.T) {
	var stderr bytes.Buffer
	if code := run([]string{"--"}, &stderr); code != exitUsage {
		t.Errorf("exit code %d, want %d", code, exitUsage)
	}
	if !strings.Contains(stderr.String(), "usage:") {
		t.Errorf("stderr %q shows no usage", stderr.String())
	}
}

func TestPassesExistingURLThrough(t *testing.T) {
	t.Setenv(pgtest.EnvURL, "postgres://db.example/ledger")
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"variable untouched, child's code", []string{"--", "sh", "-c", `test "$` + pgtest.EnvURL + `" = postgres://db.example/ledger && exit 5`}, 5},
		{"command not found", []string{"--", filepath.Join(t.TempDir(), "missing")}, exitNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := run(tc.args, &stderr); code != tc.want {
				t.Errorf("exit code %d, want %d (%s)", code, tc.want, stderr.String())
			}
		})
	}
}

func TestStartsClusterForCommandAndStopsIt(t *testing.T) {
	t.Setenv(pgtest.EnvURL, "")
	for _, exit := range []int{0, 3} {
		t.Run("command exits "+strconv.Itoa(exit), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "url")
			var stderr bytes.Buffer
			if code := run(childCommand(out, strconv.Itoa(exit)), &stderr); code != exit {
				t.Fatalf("exit code %d, want the command's %d (%s)", code, exit, stderr.String())
			}
			url, err := os.ReadFile(out)
			if err != nil {
				t.Fatalf("the command did not reach the cluster: %v", err)
			}
			clusterGone(t, string(url))
		})
	}
}

func TestSignalStopsCommandAndCluster(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "url")
			cmd := exec.Command(os.Args[0], childCommand(out, "hang")...)
			cmd.Env = append(os.Environ(), roleEnv+"=main", pgtest.EnvURL+"=")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var url []byte
			for deadline := time.Now().Add(time.Minute); len(url) == 0; {
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("the command never reached the cluster: %s", stderr.String())
				}
				time.Sleep(20 * time.Millisecond)
				url, _ = os.ReadFile(out)
			}
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 128+int(sig) {
				t.Errorf("pgtestcluster ended with %v, want exit code %d (%s)", err, 128+int(sig), stderr.String())
			}
			clusterGone(t, string(url))
		})
	}
}
