package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clearing-dev/clearing/formats/ach"
)

// An ingest that finds a run of the same file owned by another live session
// says so on stderr while it waits, instead of hanging silently for up to a
// minute; once the owner lets go, it resumes that run.
func TestIngestLogsThatItWaitsForTheOwnerOfTheSameFile(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	ctx := context.Background()
	es := liveOnly(entries(73, 10))
	f := c.achFile("day.ach", ach.DefaultHeader(created), es)
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	// Another session's run of the same bytes, which that session owns.
	owner, err := pgx.Connect(ctx, c.url)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close(ctx)
	var held int64
	if err := owner.QueryRow(ctx, `
INSERT INTO runs (tenant_id, kind, format, source, file_name, file_bytes, file_sha256, records)
VALUES ($1, 'ingest', 'ach', 'ach', 'day.ach', $2, $3, $4) RETURNING id`,
		c.tenant, len(data), sum[:], len(es)+4).Scan(&held); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Exec(ctx, `SELECT pg_advisory_lock(7411, $1::int)`, held); err != nil {
		t.Fatal(err)
	}

	// stderr goes to a file, which the test can read while the process
	// writes to it.
	stderr, err := os.Create(filepath.Join(c.dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	var stdout strings.Builder
	cmd := exec.Command(clearingBin, "--tenant", c.tenant, "--log-format", "json", "-o", "json", "ingest", f)
	cmd.Env = append(os.Environ(), "CLEARING_DATABASE_URL="+c.url, "CLEARING_PII_KEY=test-key")
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	const waiting = "waiting for the session that owns a run of the same file"
	deadline := time.Now().Add(30 * time.Second)
	for {
		logged, err := os.ReadFile(stderr.Name())
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(logged), waiting) {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the ingest ended (%v) without saying it waits:\n%s\n%s", err, stdout.String(), logged)
		default:
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no %q on stderr after 30s:\n%s", waiting, logged)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := owner.Exec(ctx, `SELECT pg_advisory_unlock(7411, $1::int)`, held); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("ingest: %v\n%s", err, stdout.String())
	}
	logged, _ := os.ReadFile(stderr.Name())
	for _, line := range strings.Split(strings.TrimSpace(string(logged)), "\n") {
		var event map[string]any
		if err := json.Unmarshal([]byte(line), &event); err != nil {
			t.Errorf("a stderr line is not JSON: %q", line)
		}
		if event["msg"] == waiting && event["run_id"] != float64(held) {
			t.Errorf("the wait names run %v, want %d: %s", event["run_id"], held, line)
		}
	}
	var sums []ingestSummary
	if err := json.Unmarshal([]byte(stdout.String()), &sums); err != nil || len(sums) != 1 {
		t.Fatalf("ingest output: %v\n%s", err, stdout.String())
	}
	if sums[0].RunID != held || sums[0].Posted != int64(len(es)) {
		t.Fatalf("the ingest did not resume run %d once its owner let go: %+v", held, sums[0])
	}
	if n := c.count(`SELECT count(*) FROM runs WHERE tenant_id = $1`, c.tenant); n != 1 {
		t.Fatalf("%d runs of the one file, want 1", n)
	}
}
