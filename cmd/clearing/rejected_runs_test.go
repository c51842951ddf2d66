package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats/ach"
	"github.com/clearing-dev/clearing/formats/bai2"
)

// rejectedFile is a file that ingest or statement import refuses, with what
// its rejected run must record.
type rejectedFile struct {
	name  string
	args  []string // flags before the file
	path  string
	bytes int64
	sha   string // hex; empty when the file could not be read
	want  string // a fragment every listing of the errors must show
}

// rejectedFiles writes a missing, an empty, a corrupt and a wrong-format
// file for a command whose valid file is valid and whose corrupt file's
// error names where (a line or an offset).
func rejectedFiles(t *testing.T, dir string, valid []byte, corruptAt int, corruptLine, where string) []rejectedFile {
	t.Helper()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sum := func(data []byte) string { s := sha256.Sum256(data); return hex.EncodeToString(s[:]) }
	lines := strings.SplitAfter(string(valid), "\n")
	lines[corruptAt] = corruptLine
	corrupt := []byte(strings.Join(lines, ""))
	wrong := []byte("id,date,amount\ntx_1,2026-11-29,1.00\n")
	missing := filepath.Join(dir, "no-such-file")
	return []rejectedFile{
		{name: "missing", path: missing, want: "no such file"},
		{name: "empty", path: write("empty", nil), sha: sum(nil), want: "is empty"},
		{name: "corrupt", path: write("corrupt", corrupt), bytes: int64(len(corrupt)), sha: sum(corrupt), want: where},
		{name: "wrong format", path: write("wrong.csv", wrong), bytes: int64(len(wrong)), sha: sum(wrong), want: "is not a file whose format can be told from its first bytes"},
	}
}

// runJSON is the JSON of one run, as 'runs' and 'runs show' print it.
type runJSON struct {
	RunID     int64    `json:"run_id"`
	Kind      string   `json:"kind"`
	File      string   `json:"file"`
	FileBytes int64    `json:"file_bytes"`
	Status    string   `json:"status"`
	Errors    []string `json:"errors"`
}

// Every file given to ingest or statement import leaves a run, a refused
// one too: a missing, empty, corrupt or wrong-format file gets one run with
// status rejected, its size, its SHA-256 when it could be read, and errors
// that name the line or offset; nothing else is written for it. 'runs'
// lists it and 'runs show' prints its errors. A dry run writes nothing, a
// rejected run included.
func TestRejectedFilesLeaveARunAndNothingElse(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	var achFile, bai2File bytes.Buffer
	es := entries(61, 10)
	if err := ach.WriteEntries(&achFile, ach.DefaultHeader(created), slices.Values(es)); err != nil {
		t.Fatal(err)
	}
	if err := bai2.Generate(&bai2File, bai2.RandomLines(bai2.RandomOptions{Lines: 10, Seed: 61}), bai2.GenerateOptions{}); err != nil {
		t.Fatal(err)
	}
	achLines := strings.SplitAfter(achFile.String(), "\n")
	// The entry on line 3 carries an amount at positions 30-39: the batch's
	// control totals no longer add up.
	badAmount := achLines[2][:29] + "0000000001" + achLines[2][39:]
	ingestDir, statementDir := filepath.Join(c.dir, "ingest"), filepath.Join(c.dir, "statement")
	for _, d := range []string{ingestDir, statementDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The rejected runs are written by a login of the ingest role, with its
	// own privileges.
	ing := *c
	ing.url, _ = c.loginURL("rejected", "clearing_ingest")
	for _, group := range []struct {
		kind    string
		command []string
		files   []rejectedFile
	}{
		{"ingest", []string{"ingest"}, rejectedFiles(t, ingestDir, achFile.Bytes(), 2, badAmount, "line 13")},
		{"statement", []string{"statement", "import", "--source", "bank"},
			rejectedFiles(t, statementDir, bai2File.Bytes(), 1, "02,not-a-group-header\n", "line 2")},
	} {
		for _, f := range group.files {
			t.Run(group.kind+"/"+f.name, func(t *testing.T) {
				c := ing.withTenant(t, group.kind+"-"+f.name)
				r := c.run(append(slices.Clone(group.command), append(f.args, f.path)...)...)
				if r.code != 1 || !strings.Contains(r.stderr, f.want) {
					t.Fatalf("want exit 1 saying %q\n%v", f.want, r)
				}
				checkRejectedRun(t, c, group.kind, f)
			})
		}
	}
	t.Run("dry run", func(t *testing.T) {
		c := c.withTenant(t, "dry-run")
		for _, f := range rejectedFiles(t, t.TempDir(), achFile.Bytes(), 2, badAmount, "line") {
			if r := c.run("ingest", "--dry-run", f.path); r.code != 1 {
				t.Fatalf("%s: want exit 1\n%v", f.name, r)
			}
		}
		if n := c.count(`SELECT count(*) FROM runs WHERE tenant_id = $1`, c.tenant); n != 0 {
			t.Fatalf("a dry run of rejected files wrote %d runs", n)
		}
	})
}

// checkRejectedRun checks that f left exactly one run, rejected, recording
// it, and nothing else; and that runs and runs show print it.
func checkRejectedRun(t *testing.T, c *cli, kind string, f rejectedFile) {
	t.Helper()
	var (
		id          int64
		gotKind     string
		status      string
		fileName    string
		fileBytes   int64
		sha         *string
		errs        []string
		finished    bool
		runs, other int64
	)
	ctx := context.Background()
	if err := c.pool.QueryRow(ctx, `SELECT count(*) FROM runs WHERE tenant_id = $1`, c.tenant).Scan(&runs); err != nil {
		t.Fatal(err)
	}
	if runs != 1 {
		t.Fatalf("%d runs, want exactly 1 rejected run", runs)
	}
	err := c.pool.QueryRow(ctx, `
SELECT id, kind, status, file_name, file_bytes, encode(file_sha256, 'hex'), errors, finished_at IS NOT NULL
  FROM runs WHERE tenant_id = $1`, c.tenant).Scan(&id, &gotKind, &status, &fileName, &fileBytes, &sha, &errs, &finished)
	if err != nil {
		t.Fatal(err)
	}
	if gotKind != kind || status != "rejected" || !finished || fileName != filepath.Base(f.path) {
		t.Errorf("run %d: kind %q, status %q, finished %v, file %q; want a finished rejected %s run of %q",
			id, gotKind, status, finished, fileName, kind, filepath.Base(f.path))
	}
	if fileBytes != f.bytes {
		t.Errorf("file_bytes %d, want %d", fileBytes, f.bytes)
	}
	switch {
	case f.sha == "" && sha != nil:
		t.Errorf("file_sha256 %s, want NULL for a file that could not be read", *sha)
	case f.sha != "" && (sha == nil || *sha != f.sha):
		t.Errorf("file_sha256 %v, want %s", sha, f.sha)
	}
	if len(errs) == 0 || !strings.Contains(strings.Join(errs, "\n"), f.want) {
		t.Errorf("errors %q do not say %q", errs, f.want)
	}
	if err := c.pool.QueryRow(ctx, `
SELECT (SELECT count(*) FROM postings WHERE tenant_id = $1) + (SELECT count(*) FROM legs WHERE tenant_id = $1)
     + (SELECT count(*) FROM statement_lines WHERE tenant_id = $1) + (SELECT count(*) FROM audit_events WHERE tenant_id = $1)
     + (SELECT count(*) FROM notices WHERE tenant_id = $1)`, c.tenant).Scan(&other); err != nil {
		t.Fatal(err)
	}
	if other != 0 {
		t.Errorf("a rejected file wrote %d postings, legs, statement lines, notices or audit events", other)
	}

	var list []runJSON
	r := c.must(0, "-o", "json", "runs")
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("runs -o json: %v\n%v", err, r)
	}
	if len(list) != 1 || list[0].RunID != id || list[0].Status != "rejected" || len(list[0].Errors) == 0 {
		t.Errorf("runs -o json does not list rejected run %d with its errors:\n%s", id, r.stdout)
	}
	if r := c.must(0, "runs"); !strings.Contains(r.stdout, "rejected") {
		t.Errorf("runs does not list the rejected run:\n%s", r.stdout)
	}
	var shown runJSON
	r = c.must(0, "-o", "json", "runs", "show", strconv.FormatInt(id, 10))
	if err := json.Unmarshal([]byte(r.stdout), &shown); err != nil {
		t.Fatalf("runs show -o json: %v\n%v", err, r)
	}
	// An operator reads them without package prefixes, as on stderr.
	printed := operatorTexts(errs)
	if shown.Status != "rejected" || shown.FileBytes != f.bytes || !slices.Equal(shown.Errors, printed) {
		t.Errorf("runs show -o json: %+v, want status rejected, %d bytes and errors %q", shown, f.bytes, printed)
	}
	for _, e := range shown.Errors {
		if packagePrefix.MatchString(e) {
			t.Errorf("runs show -o json prints a package name to an operator: %q", e)
		}
	}
	r = c.must(0, "runs", "show", strconv.FormatInt(id, 10))
	for _, e := range printed {
		if first, _, _ := strings.Cut(e, "\n"); !strings.Contains(r.stdout, first) {
			t.Errorf("runs show does not print the error %q:\n%s", first, r.stdout)
		}
	}
	if f.sha != "" && !strings.Contains(r.stdout, f.sha) {
		t.Errorf("runs show does not print the file's SHA-256 %s:\n%s", f.sha, r.stdout)
	}
}
