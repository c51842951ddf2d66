package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// README's systemd service and timer for the nightly job are units that
// systemd accepts as they are written, and the script the service runs
// is valid shell.
func TestReadmeSystemdUnitsVerify(t *testing.T) {
	t.Parallel()
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze not found (Debian: apt-get install systemd); README's units are not checked")
	}
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	at := strings.Index(text, "## Running it nightly")
	if at < 0 {
		t.Fatal("README has no section 'Running it nightly'")
	}
	text = text[at:]
	start := strings.Index(text, "```ini\n")
	if start < 0 {
		t.Fatal("README's nightly section has no systemd units (an ini block)")
	}
	block := text[start+len("```ini\n"):]
	block = block[:strings.Index(block, "```")]
	parts := regexp.MustCompile(`(?m)^# /etc/systemd/system/(\S+)\n`).Split(block, -1)
	names := regexp.MustCompile(`(?m)^# /etc/systemd/system/(\S+)\n`).FindAllStringSubmatch(block, -1)
	if len(names) != 2 {
		t.Fatalf("README's nightly section has %d units, want a service and a timer", len(names))
	}
	dir := t.TempDir()
	env := filepath.Join(dir, "env")
	if err := os.WriteFile(env, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for i, n := range names {
		unit := strings.ReplaceAll(parts[i+1], "EnvironmentFile=/etc/clearing/env", "EnvironmentFile="+env)
		p := filepath.Join(dir, n[1])
		if err := os.WriteFile(p, []byte(unit), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
		if strings.HasSuffix(n[1], ".service") {
			checkExecStartShell(t, unit)
		}
	}
	out, err := exec.Command(analyze, append([]string{"verify"}, paths...)...).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Fatalf("systemd-analyze verify %s: %v\n%s", strings.Join(paths, " "), err, out)
	}
}

// checkExecStartShell runs sh -n on the script of unit's ExecStart, as
// systemd would pass it: continuation lines joined, %% a percent sign.
func checkExecStartShell(t *testing.T, unit string) {
	t.Helper()
	m := regexp.MustCompile(`(?s)ExecStart=/bin/sh -ec '(.*?)'\n`).FindStringSubmatch(unit)
	if m == nil {
		t.Fatal("the service's ExecStart is not /bin/sh -ec '...'")
	}
	script := strings.ReplaceAll(strings.ReplaceAll(m[1], "\\\n", " "), "%%", "%")
	if out, err := exec.Command("sh", "-n", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("the service's script is not valid shell: %v\n%s\n%s", err, out, script)
	}
}
