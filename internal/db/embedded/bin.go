package embedded

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// minServerMajor is the oldest PostgreSQL the embedded cluster runs on. 13
// is the first with DROP DATABASE ... WITH (FORCE), which the test harness
// relies on, and every older release is out of upstream support.
const minServerMajor = 13

// serverBinaries is one installation of the PostgreSQL server programs.
type serverBinaries struct {
	dir   string // the folder holding initdb, pg_ctl and postgres
	major int    // the major version, such as 15
}

// path returns the full path of one of the server programs.
func (b serverBinaries) path(program string) string {
	return filepath.Join(b.dir, program)
}

// serverPrograms are the programs the embedded cluster runs. pg_ctl finds
// postgres next to itself, so all three must share a folder.
var serverPrograms = []string{"initdb", "pg_ctl", "postgres"}

// debianBinDir matches Debian's layout, /usr/lib/postgresql/<major>/bin, from
// which the version can be read without running anything.
var debianBinDir = regexp.MustCompile(`/postgresql/([0-9]+)/bin$`)

// versionOutput matches `postgres --version`, such as
// "postgres (PostgreSQL) 15.20 (Debian 15.20-0+deb12u1)".
var versionOutput = regexp.MustCompile(`\(PostgreSQL\) ([0-9]+)`)

// defaultSearchPath is where the server programs are looked for: PATH first,
// then every version Debian's packages install side by side.
func defaultSearchPath() []string {
	dirs := filepath.SplitList(os.Getenv("PATH"))
	versioned, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	return append(dirs, versioned...)
}

// findServerBinaries returns every distinct installation in dirs, in search
// order, and a description of each one skipped as too old. Symbolic links
// are resolved, so /usr/local/bin/pg_ctl pointing into
// /usr/lib/postgresql/15/bin counts once.
func findServerBinaries(ctx context.Context, dirs []string) (found []serverBinaries, skipped []string) {
	seen := map[string]bool{}
	for _, dir := range dirs {
		if !filepath.IsAbs(dir) {
			// A relative PATH entry would make the server depend on the
			// working folder, which exec.LookPath also refuses.
			continue
		}
		pgCtl, err := filepath.EvalSymlinks(filepath.Join(dir, "pg_ctl"))
		if err != nil {
			continue
		}
		realDir := filepath.Dir(pgCtl)
		if seen[realDir] || !hasPrograms(realDir) {
			continue
		}
		seen[realDir] = true
		major, err := serverMajor(ctx, realDir)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v", realDir, err))
			continue
		}
		if major < minServerMajor {
			skipped = append(skipped, fmt.Sprintf("PostgreSQL %d in %s is older than %d", major, realDir, minServerMajor))
			continue
		}
		found = append(found, serverBinaries{dir: realDir, major: major})
	}
	return found, skipped
}

// hasPrograms reports whether dir holds every server program as an
// executable file.
func hasPrograms(dir string) bool {
	for _, p := range serverPrograms {
		st, err := os.Stat(filepath.Join(dir, p))
		if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
			return false
		}
	}
	return true
}

// serverMajor reads the major version from Debian's folder name, and
// otherwise asks the server program itself.
func serverMajor(ctx context.Context, dir string) (int, error) {
	if m := debianBinDir.FindStringSubmatch(dir); m != nil {
		return strconv.Atoi(m[1])
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(dir, "postgres"), "--version").Output()
	if err != nil {
		return 0, fmt.Errorf("postgres --version: %w", err)
	}
	m := versionOutput.FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("postgres --version printed %q", strings.TrimSpace(string(out)))
	}
	return strconv.Atoi(string(m[1]))
}

// chooseServerBinaries picks the installation to run. An existing cluster
// can only be run by its own major version, so that one is required; a new
// cluster gets the highest version found, the first one found among equals.
func chooseServerBinaries(found []serverBinaries, skipped []string, dataDir string) (serverBinaries, error) {
	var also string
	if len(skipped) > 0 {
		also = " (skipped: " + strings.Join(skipped, "; ") + ")"
	}
	if b, err := os.ReadFile(filepath.Join(dataDir, "PG_VERSION")); err == nil {
		want := strings.TrimSpace(string(b))
		for _, f := range found {
			if strconv.Itoa(f.major) == want {
				return f, nil
			}
		}
		return serverBinaries{}, fmt.Errorf("embedded: the cluster in %s was created by PostgreSQL %s, whose server binaries were not found "+
			"(Debian/Ubuntu: apt-get install postgresql-%s)%s: %w", dataDir, want, want, also, ErrNoServerBinaries)
	}
	if len(found) == 0 {
		if also != "" {
			return serverBinaries{}, fmt.Errorf("%w%s", ErrNoServerBinaries, also)
		}
		return serverBinaries{}, ErrNoServerBinaries
	}
	best := found[0]
	for _, f := range found[1:] {
		if f.major > best.major {
			best = f
		}
	}
	return best, nil
}
