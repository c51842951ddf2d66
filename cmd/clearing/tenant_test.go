package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/clearing-dev/clearing/formats/ach"
)

// workFlags are the flags with which a command would do its work, so that a
// tenant id that slipped through would write something the test can see.
var workFlags = map[string][]string{
	"clearing statement import":    {"--source", "ach"},
	"clearing reconcile":           {"--source", "ach", "--from", "2026-11-01", "--to", "2026-11-30"},
	"clearing corrections approve": {"--operator", "alice", "--reason", "checked"},
	"clearing corrections reject":  {"--operator", "alice", "--reason", "checked"},
}

// runnableCommands is every command of the tree below root that does
// something, with the arguments that its argument check accepts: as many
// copies of file as it takes.
func runnableCommands(t *testing.T, file string) [][]string {
	t.Helper()
	var out [][]string
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
		if !cmd.Runnable() || !cmd.HasParent() {
			return
		}
		path := cmd.CommandPath()
		args := append(strings.Fields(path)[1:], workFlags[path]...)
		for n := 0; ; n++ {
			if n > 3 {
				t.Fatalf("%s accepts none of 0 to 3 arguments", path)
			}
			positional := make([]string, n)
			for i := range positional {
				positional[i] = file
			}
			if cmd.ValidateArgs(positional) == nil {
				out = append(out, append(args, positional...))
				break
			}
		}
	}
	walk(newRootCommand(&globalOptions{}))
	return out
}

// A tenant id is one pattern for every command: an empty id (a cron job's
// unset $TENANT), another case or a trailing space would otherwise be a
// ledger of its own, or the default one under another name. Every command
// refuses them as a usage error before it writes anything.
func TestInvalidTenantIsAUsageErrorForEveryCommand(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	day := c.achFile("day.ach", ach.DefaultHeader(created), entries(13, 20))
	cmds := runnableCommands(t, day)
	for _, want := range []string{"clearing ingest", "clearing statement import", "clearing reconcile", "clearing runs"} {
		found := false
		for _, args := range cmds {
			found = found || strings.HasPrefix("clearing "+strings.Join(args, " "), want)
		}
		if !found {
			t.Fatalf("the walk of the command tree misses %q: %v", want, cmds)
		}
	}
	written := func() int64 {
		return c.count(`SELECT (SELECT count(*) FROM runs) + (SELECT count(*) FROM postings) + (SELECT count(*) FROM statement_lines)
		                     + (SELECT count(*) FROM audit_events)`)
	}
	for _, id := range []string{"", "Default", "default ", "a:b"} {
		bad := *c
		bad.tenant = id
		for _, args := range cmds {
			r := bad.exec(args...)
			if r.code != exitUsage || !strings.Contains(r.stderr, "invalid tenant id") {
				t.Errorf("--tenant %q: want exit 2 naming the tenant id\n%v", id, r)
			}
		}
	}
	if n := written(); n != 0 {
		t.Fatalf("commands with an invalid tenant wrote %d rows to runs, postings, statement_lines and audit_events", n)
	}
	// The same command lines with a valid tenant do their work: the test
	// above would have seen anything they wrote.
	ok := c.withTenant(t, "default.2_ok-3")
	ok.must(0, "ingest", day)
	ok.must(0, append([]string{"statement", "import"}, append(workFlags["clearing statement import"], day)...)...)
	if ok.postings() == 0 || ok.count(`SELECT count(*) FROM statement_lines WHERE tenant_id = $1`, ok.tenant) == 0 {
		t.Fatal("with a valid tenant, ingest and statement import wrote nothing: the command lines test nothing")
	}
}

// A mistyped tenant holds nothing: the commands that show a tenant's data
// say so, naming the tenants that hold some, and read the empty one all
// the same; the tenant that holds the data says nothing of the kind.
func TestAnEmptyTenantIsNamedAsSuch(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	c.ingest(0, c.achFile("day.ach", ach.DefaultHeader(created), liveOnly(entries(3, 1))))
	for _, args := range [][]string{{"runs"}, {"balance"}, {"breaks", "list"}} {
		r := c.must(0, append([]string{"--tenant", "defualt"}, args...)...)
		if !strings.Contains(r.stderr, "tenant defualt holds no data") || !strings.Contains(r.stderr, c.tenant) {
			t.Fatalf("%v: no warning naming the tenant that holds data\n%v", args, r)
		}
		if r := c.must(0, args...); strings.Contains(r.stderr, "holds no data") {
			t.Fatalf("%v: the tenant with data is warned about\n%v", args, r)
		}
	}
	// Writing to a new tenant is how a tenant starts: no warning.
	if r := c.must(0, "--tenant", "fresh", "ingest", c.achFile("other.ach", ach.DefaultHeader(created), liveOnly(entries(4, 1)))); strings.Contains(r.stderr, "holds no data") {
		t.Fatalf("ingest into a new tenant warned\n%v", r)
	}
}
