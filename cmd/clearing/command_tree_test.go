package main

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// runBinary runs the clearing binary without a database: every command
// line here fails before it would open one.
func runBinary(t *testing.T, args ...string) result {
	t.Helper()
	cmd := exec.Command(clearingBin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return result{args: args, stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
}

// groups lists every command of the tree that has subcommands, at every
// level, the root and cobra's own (completion) included.
func groups(c *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	if c.HasAvailableSubCommands() {
		out = append(out, c)
	}
	for _, s := range c.Commands() {
		out = append(out, groups(s)...)
	}
	return out
}

// path is the words that run c: "ledger verify" is [ledger verify].
func path(c *cobra.Command) []string {
	return strings.Fields(c.CommandPath())[1:]
}

// 'clearing ledger verfy' printed ledger's help and exited 0, so that
// 'clearing ledger verfy || page-oncall' never paged. A mistyped subcommand
// of every command that has subcommands, at every level, is a usage error
// (exit 2) that suggests the command meant; so is the same typo after
// 'clearing help'. The walk covers whatever commands the tree holds.
func TestEveryMistypedSubcommandIsAUsageErrorWithASuggestion(t *testing.T) {
	t.Parallel()
	root := newRootCommand(&globalOptions{})
	tried := 0
	for _, parent := range groups(root) {
		for _, sub := range parent.Commands() {
			if !sub.IsAvailableCommand() {
				continue
			}
			// One letter more, after the first: "vxerify" is one edit from
			// verify and is no command's name.
			typo := sub.Name()[:1] + "x" + sub.Name()[1:]
			if c, _, err := parent.Find([]string{typo}); err == nil && c != parent {
				t.Fatalf("the typo %q of %q is a command of its own", typo, sub.CommandPath())
			}
			for _, args := range [][]string{
				append(path(parent), typo),
				append(append(path(parent), typo), "1", "--tenant", "default"),
				append([]string{"help"}, append(path(parent), typo)...),
			} {
				tried++
				r := runBinary(t, args...)
				if r.code != exitUsage {
					t.Errorf("want exit %d\n%v", exitUsage, r)
					continue
				}
				if !strings.Contains(r.stderr, `unknown command "`+typo+`"`) || !strings.Contains(r.stderr, "did you mean") ||
					!strings.Contains(r.stderr, sub.Name()) {
					t.Errorf("the error does not name %q and suggest %q:\n%v", typo, sub.Name(), r)
				}
				if r.stdout != "" {
					t.Errorf("a usage error printed on stdout:\n%v", r)
				}
			}
		}
	}
	if tried < 3*20 {
		t.Fatalf("only %d command lines tried: the walk missed the tree", tried)
	}
}

// A group run without a subcommand did nothing a cron job can have meant:
// it prints its help on stdout, as git and kubectl do, and exits 2 naming
// its subcommands. Asking for help is not an error.
func TestABareGroupPrintsItsHelpAndIsAUsageError(t *testing.T) {
	t.Parallel()
	root := newRootCommand(&globalOptions{})
	for _, parent := range groups(root) {
		if parent.Annotations[groupOnly] == "" {
			continue // runs lists the runs; show is its subcommand
		}
		r := runBinary(t, path(parent)...)
		if r.code != exitUsage || !strings.Contains(r.stdout, "Usage:") || !strings.Contains(r.stderr, "needs a subcommand") {
			t.Errorf("want its help on stdout, exit %d and a message that a subcommand is needed\n%v", exitUsage, r)
		}
		help := runBinary(t, append(path(parent), "--help")...)
		if help.code != exitOK || !strings.Contains(help.stdout, "Usage:") {
			t.Errorf("--help: want its help and exit 0\n%v", help)
		}
		if strings.Contains(help.stdout, parent.CommandPath()+" [flags]") {
			t.Errorf("the usage offers to run %q bare:\n%s", parent.CommandPath(), help.stdout)
		}
	}
}
