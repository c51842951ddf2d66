package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/cobra"

	"github.com/clearing-dev/clearing/formats/csv"
	"github.com/clearing-dev/clearing/formats/ipm"
	"github.com/clearing-dev/clearing/formats/iso8583"
	"github.com/clearing-dev/clearing/ingest"
	"github.com/clearing-dev/clearing/internal/money"
	"github.com/clearing-dev/clearing/internal/pgtest"
)

// completion is what one request of a shell's completion script
// ('clearing __complete WORDS...') answered.
type completion struct {
	values    []string          // in the order given
	desc      map[string]string // value -> description
	directive cobra.ShellCompDirective
	r         result
}

// parseCompletion reads __complete's output: one value a line (a tab
// before its description), then ":DIRECTIVE".
func parseCompletion(t *testing.T, r result) completion {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("completion failed:\n%v", r)
	}
	lines := strings.Split(strings.TrimRight(r.stdout, "\n"), "\n")
	last := lines[len(lines)-1]
	d, err := strconv.Atoi(strings.TrimPrefix(last, ":"))
	if !strings.HasPrefix(last, ":") || err != nil {
		t.Fatalf("completion without a directive:\n%v", r)
	}
	c := completion{desc: map[string]string{}, directive: cobra.ShellCompDirective(d), r: r}
	for _, l := range lines[:len(lines)-1] {
		v, desc, _ := strings.Cut(l, "\t")
		c.values = append(c.values, v)
		c.desc[v] = desc
	}
	// Whatever happened, stderr holds only cobra's own note of the
	// directive, which the scripts discard.
	if s := strings.TrimSpace(r.stderr); !strings.HasPrefix(s, "Completion ended with directive: ") || strings.Contains(s, "\n") {
		t.Fatalf("completion wrote more than its directive to stderr:\n%v", r)
	}
	return c
}

func (c *cli) complete(words ...string) completion {
	c.t.Helper()
	return parseCompletion(c.t, c.exec(append([]string{cobra.ShellCompRequestCmd}, words...)...))
}

func sameValues(got, want []string) bool {
	if len(got) == 0 && len(want) == 0 {
		return true
	}
	return slices.Equal(got, want)
}

func prefixed(prefix string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + n
	}
	return out
}

// Every flag with a closed set of values completes them, and only those the
// command takes (html for reconcile and report alone); a flag that takes a
// number or a date offers no file names.
func TestCompletionOfFlagValues(t *testing.T) {
	t.Parallel()
	none := []string(nil)
	for _, tc := range []struct {
		words     []string
		want      []string
		directive cobra.ShellCompDirective
	}{
		{[]string{"ingest", "--format", ""}, ingest.Formats, cobra.ShellCompDirectiveNoFileComp},
		{[]string{"statement", "import", "--format", ""}, ingest.StatementFormats, cobra.ShellCompDirectiveNoFileComp},
		{[]string{"runs", "-o", ""}, []string{"table", "json", "csv"}, cobra.ShellCompDirectiveNoFileComp},
		{[]string{"report", "--output", ""}, []string{"table", "json", "csv", "html"}, cobra.ShellCompDirectiveNoFileComp},
		{[]string{"reconcile", "-o", "h"}, []string{"html"}, cobra.ShellCompDirectiveNoFileComp},
		{[]string{"ingest", "--iso-framing", ""}, iso8583.Framings(), cobra.ShellCompDirectiveNoFileComp},
		{[]string{"ingest", "--ipm-blocking", ""}, []string{ipm.Blocked, ipm.Unblocked}, cobra.ShellCompDirectiveNoFileComp},
		{[]string{"statement", "import", "--ipm-encoding", ""}, ipm.Encodings(), cobra.ShellCompDirectiveNoFileComp},
		{[]string{"ingest", "--iso-spec", ""}, []string{iso8583.SpecName87ASCII, iso8583.SpecName87}, cobra.ShellCompDirectiveDefault},
		// A preset, or the path of a mapping file.
		{[]string{"ingest", "--map", ""}, prefixed("preset:", csv.Presets()), cobra.ShellCompDirectiveDefault},
		{[]string{"ingest", "--map", "preset:s"}, []string{"preset:signed-amount"}, cobra.ShellCompDirectiveNoFileComp},
		{[]string{"ingest", "--map", "./"}, none, cobra.ShellCompDirectiveDefault},
		{[]string{"breaks", "list", "--status", ""}, []string{"open", "acknowledged", "closed"}, cobra.ShellCompDirectiveNoFileComp},
		{[]string{"quarantine", "list", "--status", ""}, []string{"open", "released", "dismissed", "posted_to_suspense"}, cobra.ShellCompDirectiveNoFileComp},
		{[]string{"corrections", "list", "--status", ""}, correctionStatuses, cobra.ShellCompDirectiveNoFileComp},
		{[]string{"--log-format", ""}, []string{"text", "json"}, cobra.ShellCompDirectiveNoFileComp},
		{[]string{"generate", "csv", "--preset", ""}, csv.Presets(), cobra.ShellCompDirectiveNoFileComp},
		{[]string{"generate", "iso8583", "--framing", "r"}, []string{"rdw", "raw"}, cobra.ShellCompDirectiveNoFileComp},
		{[]string{"ingest", "--chunk-size", ""}, none, cobra.ShellCompDirectiveNoFileComp},
		{[]string{"reconcile", "--from", ""}, none, cobra.ShellCompDirectiveNoFileComp},
		{[]string{"generate", "ach", "--out", ""}, none, cobra.ShellCompDirectiveDefault},
		{[]string{"ingest", "--metrics-file", ""}, none, cobra.ShellCompDirectiveDefault},
		// Arguments: files where a command reads them, a folder for demo,
		// nothing where it takes none.
		{[]string{"ingest", ""}, none, cobra.ShellCompDirectiveDefault},
		{[]string{"generate", "demo", ""}, none, cobra.ShellCompDirectiveFilterDirs},
		{[]string{"balance", ""}, none, cobra.ShellCompDirectiveNoFileComp},
	} {
		t.Run(strings.Join(tc.words, " "), func(t *testing.T) {
			t.Parallel()
			// No database is configured: none of these needs one.
			got := parseCompletion(t, runBinary(t, append([]string{cobra.ShellCompRequestCmd}, tc.words...)...))
			if !sameValues(got.values, tc.want) || got.directive != tc.directive {
				t.Fatalf("got %q, directive %d; want %q, %d\n%v", got.values, got.directive, tc.want, tc.directive, got.r)
			}
		})
	}
}

// strings of one column of a query, in its order.
func (c *cli) column(sql string, args ...any) []string {
	c.t.Helper()
	rows, err := c.pool.Query(context.Background(), sql, args...)
	if err != nil {
		c.t.Fatal(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		c.t.Fatal(err)
	}
	return out
}

// The runs, reconciliations, corrections, breaks and held records that
// arguments name complete from the configured database, the tenant's own
// only, with what a person picks them by beside each (an amount, a class, a
// file), and without those a command could not take (an acknowledged break
// for ack, an id already on the line).
func TestCompletionFromTheDatabase(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	dir := filepath.Join(c.dir, "demo")
	c.must(0, "generate", "demo", dir)
	env, err := os.ReadFile(filepath.Join(dir, "keys.env"))
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	for _, l := range strings.Fields(string(env)) {
		k, v, _ := strings.Cut(l, "=")
		keys[k] = v
	}
	c.ingest(0, filepath.Join(dir, "day1.ach"), filepath.Join(dir, "returns.ach"))
	c.must(0, "statement", "import", "--source", "ach", filepath.Join(dir, "statement.bai2"))
	c.must(3, "reconcile", "--source", "ach", "--from", keys["FROM"], "--to", keys["TO"])
	// Another tenant holds only orphan returns: quarantined, and none of
	// the first tenant's business.
	other := *c
	other.tenant = "other"
	other.ingest(3, filepath.Join(dir, "returns.ach"))

	check := func(who *cli, words []string, want []string) completion {
		t.Helper()
		got := who.complete(words...)
		if !sameValues(got.values, want) || got.directive != cobra.ShellCompDirectiveNoFileComp {
			t.Fatalf("%s (tenant %s): got %q, directive %d; want %q\n%v", strings.Join(words, " "), who.tenant, got.values, got.directive, want, got.r)
		}
		return got
	}
	recons := c.column(`SELECT id::text FROM reconciliations WHERE tenant_id = $1 ORDER BY id DESC`, c.tenant)
	if len(recons) != 1 {
		t.Fatalf("reconciliations %v, want one", recons)
	}
	check(c, []string{"report", ""}, append([]string{"latest"}, recons...))
	check(c, []string{"report", "l"}, []string{"latest"})
	check(c, []string{"report", recons[0], ""}, nil) // report takes one run
	check(c, []string{"corrections", "list", "--run", ""}, recons)
	check(&other, []string{"report", ""}, []string{"latest"})

	runs := c.column(`SELECT id::text FROM runs WHERE tenant_id = $1 ORDER BY id DESC`, c.tenant)
	got := check(c, []string{"runs", "show", ""}, runs)
	if d := got.desc[runs[len(runs)-1]]; d != "ingest ach day1.ach" {
		t.Errorf("run %s is described as %q, want its kind, source and file", runs[len(runs)-1], d)
	}

	ids := c.column(`SELECT id::text FROM corrections WHERE tenant_id = $1 ORDER BY id DESC`, c.tenant)
	if len(ids) < 2 {
		t.Fatalf("corrections %v, want at least two", ids)
	}
	got = check(c, []string{"corrections", "show", ""}, ids)
	var amount int64
	var currency, class string
	if err := c.pool.QueryRow(context.Background(), `SELECT amount_minor, currency, class FROM corrections WHERE tenant_id = $1 AND id = $2`,
		c.tenant, ids[0]).Scan(&amount, &currency, &class); err != nil {
		t.Fatal(err)
	}
	if want := "proposed " + class + " " + money.FormatCode(amount, currency); got.desc[ids[0]] != want {
		t.Errorf("correction %s is described as %q, want %q", ids[0], got.desc[ids[0]], want)
	}
	// An id already on the line is not offered again.
	check(c, []string{"corrections", "approve", ids[0], ""}, ids[1:])
	check(&other, []string{"corrections", "show", ""}, nil)

	breakKeys := c.column(`SELECT item_key FROM breaks WHERE tenant_id = $1 GROUP BY item_key ORDER BY max(id) DESC`, c.tenant)
	if len(breakKeys) < 2 {
		t.Fatalf("breaks %v, want at least two", breakKeys)
	}
	check(c, []string{"breaks", "show", ""}, breakKeys)
	check(c, []string{"breaks", "ack", ""}, breakKeys)
	// Acknowledged, a break is still shown but no longer acknowledged again.
	op := *c
	op.url, _ = c.loginURL("op", "clearing_approver")
	op.must(0, "breaks", "ack", breakKeys[0], "--reason", "the bank reverses it tomorrow")
	check(c, []string{"breaks", "show", ""}, breakKeys)
	check(c, []string{"breaks", "ack", ""}, breakKeys[1:])
	// What has been typed narrows the query, not only the shell's list.
	prefix := breakKeys[1][:strings.LastIndex(breakKeys[1], ":")+1]
	var narrowed []string
	for _, k := range breakKeys[1:] {
		if strings.HasPrefix(k, prefix) {
			narrowed = append(narrowed, k)
		}
	}
	check(c, []string{"breaks", "ack", prefix}, narrowed)

	held := other.column(`SELECT record_key FROM quarantine WHERE tenant_id = $1 GROUP BY record_key ORDER BY max(created_at) DESC, record_key`, other.tenant)
	if len(held) != 2 {
		t.Fatalf("held records %v, want the two orphan returns", held)
	}
	check(&other, []string{"quarantine", "show", ""}, held)
	check(&other, []string{"quarantine", "dismiss", ""}, held)
	check(&other, []string{"quarantine", "list", "--verdict", ""}, []string{"orphan_return"})
	check(c, []string{"quarantine", "show", ""}, nil)
	opOther := other
	opOther.url = op.url
	opOther.must(0, "quarantine", "dismiss", held[0], "--reason", "sent to us by mistake")
	got = check(&other, []string{"quarantine", "show", ""}, held)
	if !strings.HasPrefix(got.desc[held[0]], "dismissed orphan_return") {
		t.Errorf("a dismissed record is described as %q", got.desc[held[0]])
	}
	check(&other, []string{"quarantine", "release", ""}, held[1:])

	check(c, []string{"reconcile", "--source", ""}, []string{"ach"})
	check(c, []string{"--tenant", ""}, []string{"default", "other"})
	keyPrefix := keys["RETURNED_KEY"][:len(keys["RETURNED_KEY"])-1]
	check(c, []string{"lookup", keyPrefix}, c.column(`SELECT posting_key FROM postings WHERE tenant_id = $1 AND starts_with(posting_key, $2) ORDER BY posting_key`, c.tenant, keyPrefix))
	check(c, []string{"config", "get", ""}, []string{"corrections.four_eyes_above.USD"})

	// A reader's login completes the same: the queries need only SELECT.
	reader := *c
	reader.url, _ = c.loginURL("reader", "clearing_reader")
	check(&reader, []string{"corrections", "show", ""}, ids)
	check(&reader, []string{"breaks", "ack", ""}, breakKeys[1:])
}

// Completion that cannot reach the database, or reaches one it cannot use,
// completes nothing from it and says nothing: no error text in the shell,
// exit 0, and no longer than its timeout against a server that never
// answers.
func TestCompletionFailsQuietly(t *testing.T) {
	t.Parallel()
	c := newCLI(t)

	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()

	// A server that accepts connections and never says a word.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })
	go func() {
		var held []net.Conn
		defer func() {
			for _, conn := range held {
				conn.Close()
			}
		}()
		for {
			conn, err := silent.Accept()
			if err != nil {
				return
			}
			held = append(held, conn)
		}
	}()

	// A database without clearing's schema.
	empty := fmt.Sprintf("completion_empty_%d", time.Now().UnixNano())
	if _, err := c.pool.Exec(context.Background(), "CREATE DATABASE "+empty); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.pool.Exec(context.Background(), "DROP DATABASE IF EXISTS "+empty+" WITH (FORCE)") })
	emptyURL, err := pgtest.WithDatabase(c.url, empty)
	if err != nil {
		t.Fatal(err)
	}
	missingURL, err := pgtest.WithDatabase(c.url, "completion_no_such_database")
	if err != nil {
		t.Fatal(err)
	}
	noLogin, err := pgtest.AsUser(c.url, "completion_no_such_login")
	if err != nil {
		t.Fatal(err)
	}

	for name, url := range map[string]string{
		"refused":       "postgres://postgres@" + closedAddr + "/clearing?sslmode=disable",
		"silent":        "postgres://postgres@" + silent.Addr().String() + "/clearing?sslmode=disable",
		"no schema":     emptyURL,
		"no database":   missingURL,
		"unknown login": noLogin,
		"not a URL":     "postgres://[::1",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d := *c
			d.url = url
			began := time.Now()
			got := d.complete("report", "")
			if took := time.Since(began); took > completionTimeout+2*time.Second {
				t.Errorf("completion took %v", took)
			}
			if !sameValues(got.values, []string{"latest"}) || got.directive != cobra.ShellCompDirectiveNoFileComp {
				t.Fatalf("got %q, directive %d; want only latest\n%v", got.values, got.directive, got.r)
			}
			got = d.complete("corrections", "approve", "")
			if len(got.values) != 0 || got.directive != cobra.ShellCompDirectiveNoFileComp {
				t.Fatalf("got %q, directive %d; want nothing\n%v", got.values, got.directive, got.r)
			}
		})
	}

	// Without a configured database, an embedded cluster that does not
	// exist is not created for a completion.
	home := filepath.Join(t.TempDir(), "home")
	cmd := exec.Command(clearingBin, cobra.ShellCompRequestCmd, "corrections", "show", "")
	cmd.Env = append(withoutDatabaseEnv(), "CLEARING_HOME="+home)
	out, err := cmd.Output()
	if err != nil || string(out) != fmt.Sprintf(":%d\n", cobra.ShellCompDirectiveNoFileComp) {
		t.Fatalf("embedded: %v\n%s", err, out)
	}
	if _, err := os.Stat(home); !os.IsNotExist(err) {
		t.Fatalf("completion made the embedded cluster's home: %v", err)
	}
}

// withoutDatabaseEnv is the test's environment without a configured
// database.
func withoutDatabaseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CLEARING_DATABASE_URL=") && !strings.HasPrefix(kv, "DATABASE_URL=") {
			env = append(env, kv)
		}
	}
	return env
}

// 'clearing completion SHELL' writes a script that the shell reads without
// a syntax error; bash's (with the bash-completion package) and fish's,
// where they are installed, complete a flag value through the binary.
func TestCompletionScripts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		r := runBinary(t, "completion", sh)
		if r.code != 0 || !strings.Contains(r.stdout, "__complete") {
			t.Fatalf("completion %s:\n%v", sh, r)
		}
		script := filepath.Join(dir, "clearing."+sh)
		if err := os.WriteFile(script, []byte(r.stdout), 0o644); err != nil {
			t.Fatal(err)
		}
		if sh == "powershell" {
			continue
		}
		if _, err := exec.LookPath(sh); err != nil {
			if sh == "bash" {
				t.Fatal("bash is not installed")
			}
			t.Logf("%s is not installed: its script is not checked", sh)
			continue
		}
		if out, err := exec.Command(sh, "-n", script).CombinedOutput(); err != nil {
			t.Fatalf("%s -n: %v\n%s", sh, err, out)
		}
	}
	// The binary is on PATH as clearing, as the scripts expect.
	path := "PATH=" + filepath.Dir(clearingBin) + string(os.PathListSeparator) + os.Getenv("PATH")
	want := strings.Join(iso8583.Framings(), "\n")

	const bashCompletion = "/usr/share/bash-completion/bash_completion"
	if _, err := os.Stat(bashCompletion); err == nil {
		cmd := exec.Command("bash", "-c", `source "$1"; source "$2"
COMP_WORDS=(clearing ingest --iso-framing ""); COMP_CWORD=3; COMP_LINE="clearing ingest --iso-framing "; COMP_POINT=${#COMP_LINE}; COMP_TYPE=9
__start_clearing 2>/dev/null; printf '%s\n' "${COMPREPLY[@]}" | sort`, "bash", bashCompletion, filepath.Join(dir, "clearing.bash"))
		cmd.Env = append(withoutDatabaseEnv(), path)
		out, err := cmd.Output()
		if sorted := sortedLines(want); err != nil || strings.TrimSpace(string(out)) != sorted {
			t.Fatalf("bash completed --iso-framing with %q (%v), want %q", out, err, sorted)
		}
	} else {
		t.Logf("bash-completion is not installed: bash's script is only parsed")
	}
	if _, err := exec.LookPath("fish"); err == nil {
		cmd := exec.Command("fish", "-c", `source $argv[1]; complete -C "clearing ingest --iso-framing " | sort`, filepath.Join(dir, "clearing.fish"))
		cmd.Env = append(withoutDatabaseEnv(), path)
		out, err := cmd.Output()
		if sorted := sortedLines(want); err != nil || strings.TrimSpace(string(out)) != sorted {
			t.Fatalf("fish completed --iso-framing with %q (%v), want %q", out, err, sorted)
		}
	}
}

func sortedLines(s string) string {
	lines := strings.Split(s, "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
