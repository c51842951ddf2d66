package embedded_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/internal/db/embedded"
)

func TestStartFailsWithAdvice(t *testing.T) {
	tests := []struct {
		name string
		// setup returns the options to start with, after preparing their home.
		setup func(t *testing.T) embedded.Options
		want  error
		// say are fragments the message must contain, because they tell
		// the operator what to do.
		say []string
		// untouched means the home must not have been created.
		untouched bool
	}{{
		name: "no server binaries",
		setup: func(t *testing.T) embedded.Options {
			return embedded.Options{Home: testHome(t), SearchPath: []string{t.TempDir()}}
		},
		want:      embedded.ErrNoServerBinaries,
		say:       []string{"apt-get install postgresql", "--database-url", "CLEARING_DATABASE_URL"},
		untouched: true,
	}, {
		name: "socket path too long",
		setup: func(t *testing.T) embedded.Options {
			return embedded.Options{Home: filepath.Join(testHome(t), strings.Repeat("x", 80))}
		},
		want:      embedded.ErrHome,
		say:       []string{"at most 107", "CLEARING_HOME"},
		untouched: true,
	}, {
		name: "cluster of a version that is not installed",
		setup: func(t *testing.T) embedded.Options {
			home := testHome(t)
			writeFile(t, filepath.Join(home, "pg", "data", "PG_VERSION"), "99\n")
			return embedded.Options{Home: home}
		},
		want: embedded.ErrNoServerBinaries,
		say:  []string{"created by PostgreSQL 99", "postgresql-99"},
	}, {
		name: "home is a file",
		setup: func(t *testing.T) embedded.Options {
			home := testHome(t)
			writeFile(t, home, "")
			return embedded.Options{Home: home}
		},
		want: embedded.ErrHome,
		say:  []string{"not a folder"},
	}, {
		name: "data folder that holds no cluster",
		setup: func(t *testing.T) embedded.Options {
			home := testHome(t)
			writeFile(t, filepath.Join(home, "pg", "data", "notes.txt"), "mine")
			if os.Geteuid() == 0 {
				chownAll(t, filepath.Join(home, "pg"), "postgres")
				if err := os.Chmod(home, 0o711); err != nil {
					t.Fatal(err)
				}
			}
			return embedded.Options{Home: home}
		},
		want: embedded.ErrHome,
		say:  []string{"holds no PostgreSQL cluster"},
	}, {
		name: "server that cannot start",
		setup: func(t *testing.T) embedded.Options {
			home := testHome(t)
			e := start(t, home)
			if err := e.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			appendFile(t, filepath.Join(home, "pg", "data", "postgresql.auto.conf"), "shared_buffers = 'plenty'\n")
			return embedded.Options{Home: home}
		},
		want: embedded.ErrServer,
		// The server's own words, from the end of its log.
		say: []string{"did not start", "server.log", `invalid value for parameter "shared_buffers"`},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.setup(t)
			e, err := embedded.Start(context.Background(), opts)
			if err == nil {
				e.Close(context.Background())
				t.Fatal("Start succeeded")
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("error %q does not wrap %q", err, tc.want)
			}
			for _, s := range tc.say {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
			if _, statErr := os.Stat(opts.Home); tc.untouched && statErr == nil {
				t.Errorf("the home %s was created although nothing could run there", opts.Home)
			}
		})
	}
}

func TestStartAsRootNeedsReachableHome(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root hands the server to another OS user")
	}
	private := t.TempDir() // 0700, root's: the postgres user cannot enter
	_, err := embedded.Start(context.Background(), embedded.Options{Home: filepath.Join(private, "home")})
	if !errors.Is(err, embedded.ErrHome) {
		t.Fatalf("error %v does not wrap ErrHome", err)
	}
	for _, s := range []string{"OS user postgres", "cannot enter " + filepath.Dir(private), "CLEARING_HOME", "/var/lib/clearing"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, path, content string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
}
