package main

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats/ach"
	"github.com/clearing-dev/clearing/internal/pii"
)

// Against a configured database, ingest and statement import refuse to run
// without a secret PII key (or with the public development key), since
// hashes made with a known key can be reversed by trying every account
// number. The refusal is a usage error that names the variable and how to
// make a key, and nothing is read or written: no run, no posting, no line.
func TestIngestAndImportRefuseWithoutAPIIKey(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	day := c.achFile("day.ach", ach.DefaultHeader(created), entries(6, 10))
	cmds := [][]string{
		{"ingest", day},
		{"ingest", "--dry-run", day},
		{"statement", "import", "--source", "ach", day},
	}
	for _, key := range []string{"", pii.DevelopmentKey} {
		nokey := c.withTenant(t, "nokey")
		nokey.env = []string{"CLEARING_PII_KEY=" + key}
		for _, args := range cmds {
			r := nokey.exec(args...)
			if r.code != exitUsage || !strings.Contains(r.stderr, "CLEARING_PII_KEY") || !strings.Contains(r.stderr, "openssl rand -hex 32") {
				t.Errorf("CLEARING_PII_KEY=%.12q: want exit 2 naming the variable and how to make a key\n%v", key, r)
			}
		}
	}
	if n := c.count(`SELECT (SELECT count(*) FROM runs) + (SELECT count(*) FROM postings) + (SELECT count(*) FROM statement_lines)
	                        + (SELECT count(*) FROM audit_events)`); n != 0 {
		t.Fatalf("refused commands wrote %d rows to runs, postings, statement_lines and audit_events", n)
	}
	// The harness sets a key for every command: then both work, without a
	// warning.
	for _, args := range cmds {
		if r := c.must(0, args...); strings.Contains(r.stderr, "CLEARING_PII_KEY") {
			t.Errorf("a warning about the key with a key set:\n%v", r)
		}
	}
	if c.postings() == 0 {
		t.Fatal("with a key, ingest posted nothing")
	}
}

// Only the embedded cluster, a demonstration on one machine, may hash with
// the development key, and then every ingest and import warns.
func TestOnlyTheEmbeddedClusterMayUseTheDevelopmentKey(t *testing.T) {
	t.Setenv("CLEARING_DATABASE_URL", "")
	t.Setenv("DATABASE_URL", "")
	t.Setenv("CLEARING_PII_KEY", "")
	var logged bytes.Buffer
	g := &globalOptions{log: slog.New(slog.NewTextHandler(&logged, nil))}
	if err := g.checkPIIKey(); err != nil {
		t.Fatalf("the embedded cluster without a key: %v", err)
	}
	if g.hasher(); !strings.Contains(logged.String(), "CLEARING_PII_KEY is not set") {
		t.Fatalf("no warning about the development key: %q", logged.String())
	}
	for _, configure := range []func(){
		func() { g.databaseURL = "postgres://db.example/clearing" },
		func() { g.databaseURL = ""; t.Setenv("CLEARING_DATABASE_URL", "postgres://db.example/clearing") },
		func() {
			t.Setenv("CLEARING_DATABASE_URL", "")
			t.Setenv("DATABASE_URL", "postgres://db.example/clearing")
		},
	} {
		configure()
		var ue usageError
		if err := g.checkPIIKey(); !errors.As(err, &ue) {
			t.Fatalf("a configured database without a key: %v, want a usage error", err)
		}
	}
	t.Setenv("CLEARING_PII_KEY", "0123456789abcdef0123456789abcdef")
	if err := g.checkPIIKey(); err != nil {
		t.Fatalf("a configured database with a key: %v", err)
	}
}
