package main

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats/ach"
)

// startsWithPackage reports the package name that begins line (after its
// indentation and clearing's own "clearing: "), or "".
func startsWithPackage(line string) string {
	line = strings.TrimPrefix(strings.TrimLeft(line, " \t"), "clearing: ")
	for _, p := range modulePackages {
		if strings.HasPrefix(line, p+": ") {
			return p
		}
	}
	return ""
}

// rowsWritten counts what a command can leave behind: runs, postings and
// statement lines.
const rowsWritten = `SELECT (SELECT count(*) FROM runs) + (SELECT count(*) FROM postings) + (SELECT count(*) FROM statement_lines)`

// Known user mistakes exit with the code README's table gives them (an
// unknown flag value is a usage error, 2, not a failed file, 1), and what
// they print does not begin with a Go package's name ("registry: unknown
// format", "reconcile: perspective"), in text or in JSON. A BAI2 file's
// first error is printed once, not again in the verdict.
func TestUserErrorsHaveTheirExitCodeAndNoPackagePrefix(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	day := c.achFile("day.ach", ach.DefaultHeader(created), liveOnly(entries(15, 6)))
	badACH := c.file("bad.ach", []byte("101 this is not an ACH file\n"))
	badBAI2 := c.file("bad.bai2", []byte("01,bank,us,260302,0600,1,,,2/\n02,us,bank,1,260302,,USD,2/\n03,1234,USD,010,100,,/\n"))
	garbageMap := c.file("garbage.toml", []byte("[columns\nnot toml"))
	csvFile := c.file("s.csv", []byte("id,amount\n1,2\n"))
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"corrupt ACH file", []string{"ingest", badACH}, exitError, "bad.ach"},
		{"missing file", []string{"ingest", c.dir + "/none.ach"}, exitError, "no such file"},
		{"unknown ingest format", []string{"ingest", "--format", "nacha", day}, exitUsage, `"nacha" for "--format"`},
		{"BAI2 named for ingest", []string{"ingest", "--format", "bai2", day}, exitUsage, `"bai2" for "--format"`},
		{"unknown statement format", []string{"statement", "import", "--source", "ach", "--format", "nacha", day}, exitUsage, `"--format"`},
		{"unknown perspective", []string{"statement", "import", "--source", "ach", "--perspective", "sideways", day}, exitUsage, `"--perspective"`},
		{"unknown ISO 8583 framing", []string{"ingest", "--format", "iso8583", "--iso-framing", "nosuch", day}, exitUsage, "rdw"},
		{"unknown ISO 8583 spec", []string{"ingest", "--format", "iso8583", "--iso-spec", "spec88", day}, exitUsage, "spec87"},
		{"unknown CSV preset", []string{"ingest", "--format", "csv", "--map", "preset:nosuch", csvFile}, exitUsage, "unknown preset"},
		{"mapping that is not TOML", []string{"ingest", "--format", "csv", "--map", garbageMap, csvFile}, exitError, "invalid mapping"},
		{"unknown output", []string{"-o", "xml", "runs"}, exitUsage, `"xml"`},
		{"unknown log format", []string{"--log-format", "xml", "runs"}, exitUsage, `"--log-format"`},
		{"unknown generate framing", []string{"generate", "iso8583", "--framing", "nosuch"}, exitUsage, "rdw"},
		{"bad reconcile window", []string{"reconcile", "--source", "ach", "--from", "2026-11-29", "--to", "2026-11-29", "--window", "x"}, exitUsage, "--window"},
		{"corrupt BAI2 statement", []string{"statement", "import", "--source", "ach", badBAI2}, exitError, "line 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := c.count(rowsWritten)
			r := c.withTenant(t, c.tenant).exec(tc.args...)
			if r.code != tc.code {
				t.Fatalf("want exit %d\n%v", tc.code, r)
			}
			if after := c.count(rowsWritten); tc.code == exitUsage && after != before {
				t.Errorf("a usage error wrote %d rows to runs, postings and statement lines", after-before)
			}
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("stderr does not say %q\n%v", tc.want, r)
			}
			for _, line := range strings.Split(r.stderr, "\n") {
				if p := startsWithPackage(line); p != "" {
					t.Errorf("a message starts with the package name %q: %q\n%v", p, line, r)
				}
			}
			// The first error of a BAI2 file once, not again in the verdict.
			if strings.Contains(r.stderr, "ERROR parsing") || strings.Count(r.stderr, "without a file trailer") > 1 {
				t.Errorf("a BAI2 error is printed twice:\n%v", r)
			}
			js := c.withTenant(t, c.tenant).exec(append([]string{"--log-format", "json"}, tc.args...)...)
			if js.code != tc.code {
				t.Fatalf("--log-format json: want exit %d\n%v", tc.code, js)
			}
			for _, line := range strings.Split(strings.TrimSpace(js.stderr), "\n") {
				var ev map[string]any
				if err := json.Unmarshal([]byte(line), &ev); err != nil {
					t.Fatalf("--log-format json: a line is not JSON: %q\n%v", line, js)
				}
				texts := []any{ev["msg"], ev["error"]}
				if errs, ok := ev["errors"].([]any); ok {
					texts = append(texts, errs...)
				}
				for _, s := range texts {
					if s, ok := s.(string); ok && startsWithPackage(s) != "" {
						t.Errorf("--log-format json: %q starts with a package name\n%v", s, js)
					}
				}
			}
		})
	}
}

// The package names that userMessage strips are those of the module, all
// of them: a new package's errors get the same treatment.
func TestPackagePrefixes(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.Name}}", "../../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, name := range strings.Fields(string(out)) {
		if name != "main" && !slices.Contains(modulePackages, name) {
			t.Errorf("package %s is missing from modulePackages (cmd/clearing/logging.go): add it, so that its error prefixes are not shown to operators", name)
		}
	}
	for in, want := range map[string]string{
		"registry: unknown format \"x\"":                    "unknown format \"x\"",
		"a.csv: rejected: csv: reconcile: bad":              "a.csv: rejected: bad",
		"f: rejected\n  line 4: ach: invalid\n  ach: file":  "f: rejected\n  line 4: invalid\n  file",
		"key ach:123:2026 is missing":                       "key ach:123:2026 is missing",
		"/data/ledger: backups/csv: file is not a registry": "/data/ledger: backups/csv: file is not a registry",
	} {
		if got := userMessage(errorString(in)); got != want {
			t.Errorf("userMessage(%q) = %q, want %q", in, got, want)
		}
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }
