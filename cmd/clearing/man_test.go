package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// manDir is the repository's man/, which 'make man' writes and
// 'make install' installs.
const manDir = "../../man"

// The pages in man/ are those of the command tree, byte for byte: a command,
// flag or help text changed without 'make man' fails here, and so in CI.
func TestManPagesAreCurrent(t *testing.T) {
	t.Parallel()
	pages, err := manPages(newRootCommand(&globalOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	committed, err := filepath.Glob(filepath.Join(manDir, "*."+manSection))
	if err != nil {
		t.Fatal(err)
	}
	var stale []string
	for _, p := range committed {
		name := filepath.Base(p)
		have, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		want, ok := pages[name]
		switch {
		case !ok:
			stale = append(stale, name+" (no such command)")
		case !bytes.Equal(have, want):
			stale = append(stale, name+" (differs)")
		}
	}
	for name := range pages {
		if _, err := os.Stat(filepath.Join(manDir, name)); err != nil {
			stale = append(stale, name+" (missing)")
		}
	}
	if len(stale) > 0 {
		slices.Sort(stale)
		t.Fatalf("man/ is not the command tree's: run 'make man' and commit man/:\n  %s", strings.Join(stale, "\n  "))
	}
}

// One page per command that a user can run or name, clearing.1 first among
// them, with no date that changes from run to run, and rendered by man(1)
// without losing text that Markdown would take for a tag.
func TestManPagesCoverTheTree(t *testing.T) {
	t.Parallel()
	root := newRootCommand(&globalOptions{})
	var want []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		want = append(want, strings.ReplaceAll(c.CommandPath(), " ", "-")+".1")
		for _, s := range c.Commands() {
			if s.IsAvailableCommand() {
				walk(s)
			}
		}
	}
	walk(root)
	pages, err := manPages(newRootCommand(&globalOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for name := range pages {
		got = append(got, name)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) || !slices.Contains(got, "clearing.1") || slices.Contains(got, "clearing-man.1") {
		t.Fatalf("pages %q, want %q", got, want)
	}
	for name, page := range pages {
		th := string(page[bytes.Index(page, []byte("\n.TH ")):])
		th = th[:strings.IndexByte(th[1:], '\n')+1]
		if want := `.TH "` + strings.ToUpper(strings.TrimSuffix(name, ".1")) + `" "1" "" "clearing" "clearing manual"`; strings.TrimSpace(th) != want {
			t.Errorf("%s: header %q, want %q", name, th, want)
		}
		if bytes.Contains(page, []byte("Auto generated")) {
			t.Errorf("%s carries cobra's dated history", name)
		}
	}
	if _, err := exec.LookPath("man"); err != nil {
		t.Log("man is not installed: the pages are not rendered")
		return
	}
	path := filepath.Join(t.TempDir(), "clearing-balance.1")
	if err := os.WriteFile(path, pages["clearing-balance.1"], 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("man", "-l", path)
	cmd.Env = append(os.Environ(), "MANWIDTH=120", "MANPAGER=cat", "PAGER=cat")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("man -l: %v", err)
	}
	for _, s := range []string{"settlement:<source>", "cust:<32 hex digits>", `("settlement:*")`} {
		if !bytes.Contains(out, []byte(s)) {
			t.Errorf("the rendered page lost %q:\n%s", s, out)
		}
	}
}
