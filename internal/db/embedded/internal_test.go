package embedded

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// fakeServer creates dir with stand-ins for the server programs; postgres
// prints version when asked for it.
func fakeServer(t *testing.T, dir, version string, programs ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range programs {
		script := "#!/bin/sh\necho 'postgres (PostgreSQL) " + version + "'\n"
		if err := os.WriteFile(filepath.Join(dir, p), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func TestChooseServerBinaries(t *testing.T) {
	root := t.TempDir()
	all := serverPrograms
	fakeServer(t, filepath.Join(root, "lib/postgresql/14/bin"), "14.9", all...)
	fakeServer(t, filepath.Join(root, "lib/postgresql/16/bin"), "16.4", all...)
	fakeServer(t, filepath.Join(root, "lib/postgresql/12/bin"), "12.1", all...)
	fakeServer(t, filepath.Join(root, "opt/pg17/bin"), "17.2", all...)
	fakeServer(t, filepath.Join(root, "opt/client-only/bin"), "17.2", "pg_ctl", "postgres")
	// A PATH folder of links into an installation counts as that
	// installation, once.
	links := filepath.Join(root, "usr/local/bin")
	os.MkdirAll(links, 0o755)
	for _, p := range all {
		if err := os.Symlink(filepath.Join(root, "lib/postgresql/16/bin", p), filepath.Join(links, p)); err != nil {
			t.Fatal(err)
		}
	}
	search := []string{
		links, "relative/bin", filepath.Join(root, "opt/client-only/bin"),
		filepath.Join(root, "lib/postgresql/12/bin"), filepath.Join(root, "lib/postgresql/14/bin"),
		filepath.Join(root, "lib/postgresql/16/bin"), filepath.Join(root, "opt/pg17/bin"),
	}
	found, skipped := findServerBinaries(context.Background(), search)
	if len(found) != 3 {
		t.Fatalf("found %v, want the installations 16, 14 and 17 once each", found)
	}
	if len(skipped) != 1 || !strings.Contains(skipped[0], "PostgreSQL 12") {
		t.Errorf("skipped %q, want PostgreSQL 12 as too old", skipped)
	}

	tests := []struct {
		name, clusterVersion string
		wantDir              string
		wantErr              error
	}{
		{"new cluster takes the highest version", "", "opt/pg17/bin", nil},
		{"existing cluster keeps its version", "14", "lib/postgresql/14/bin", nil},
		{"existing cluster of a missing version", "15", "", ErrNoServerBinaries},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			if tc.clusterVersion != "" {
				os.MkdirAll(data, 0o700)
				os.WriteFile(filepath.Join(data, "PG_VERSION"), []byte(tc.clusterVersion+"\n"), 0o600)
			}
			got, err := chooseServerBinaries(found, skipped, data)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				if !strings.Contains(err.Error(), "postgresql-"+tc.clusterVersion) {
					t.Errorf("error %q does not name the package to install", err)
				}
				return
			}
			if want := filepath.Join(root, tc.wantDir); got.dir != want {
				t.Errorf("chose %s, want %s", got.dir, want)
			}
		})
	}
}

func TestConnStringQuotesTheSocketFolder(t *testing.T) {
	for _, home := range []string{"/srv/clearing", "/srv/with space", `/srv/it's`, `/srv/back\slash`} {
		t.Run(home, func(t *testing.T) {
			e := &Cluster{pgDir: filepath.Join(home, pgDirName), database: "clearing"}
			cfg, err := pgconn.ParseConfig(e.ConnString())
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Host != e.pgDir || cfg.Port != serverPort || cfg.Database != "clearing" || cfg.User != superuser {
				t.Errorf("parsed host %q port %d database %q user %q", cfg.Host, cfg.Port, cfg.Database, cfg.User)
			}
		})
	}
}

func TestQuoteConfValue(t *testing.T) {
	tests := []struct{ in, want string }{
		{`/srv/clearing`, `'/srv/clearing'`},
		{`/srv/it's`, `'/srv/it''s'`},
		{`/srv/back\slash`, `'/srv/back\\slash'`},
	}
	for _, tc := range tests {
		if got := quoteConfValue(tc.in); got != tc.want {
			t.Errorf("quoteConfValue(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestLastLines(t *testing.T) {
	got := lastLines("one\ntwo\nthree\n", 2)
	if got != "    two\n    three" {
		t.Errorf("lastLines = %q", got)
	}
}

func TestZombie(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	if zombie(os.Getpid()) {
		t.Error("this process counts as a zombie")
	}
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	// Until it is reaped, the exited child is a zombie.
	deadline := time.Now().Add(10 * time.Second)
	for !zombie(cmd.Process.Pid) {
		if time.Now().After(deadline) {
			t.Fatal("an exited, unreaped child never showed as a zombie")
		}
		time.Sleep(5 * time.Millisecond)
	}
	e := &Cluster{dataDir: t.TempDir()}
	if got := e.processState(cmd.Process.Pid); got != serverDead {
		t.Errorf("processState of a zombie = %d, want serverDead", got)
	}
}
