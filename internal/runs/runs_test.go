package runs_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clearing-dev/clearing/internal/pgtest"
	"github.com/clearing-dev/clearing/internal/runs"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func fileRun() runs.Run {
	sum := sha256.Sum256([]byte("one file"))
	return runs.Run{Kind: "ingest", Format: "ach", Source: "ach", FileName: "day.ach", FileBytes: 8, FileSHA256: sum[:], Records: 10}
}

type claimed struct {
	run     runs.Run
	resumed bool
	err     error
}

func claimAsync(conn *pgx.Conn, o runs.ClaimOptions) chan claimed {
	ch := make(chan claimed, 1)
	go func() {
		r, resumed, err := runs.ClaimWith(context.Background(), conn, "default", fileRun(), o)
		ch <- claimed{r, resumed, err}
	}()
	return ch
}

func runCount(t *testing.T, conn *pgx.Conn) int64 {
	t.Helper()
	var n int64
	if err := conn.QueryRow(context.Background(), `SELECT count(*) FROM runs`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A killed process keeps its server session, and so its run's lock, until
// the server notices: runs.Claim waits for that session to end and then resumes
// the run instead of starting another.
func TestClaimWaitsForTheOwnerOfARunningRunAndResumesIt(t *testing.T) {
	t.Parallel()
	url := pgtest.ConnString(t)
	ctx := context.Background()
	owner, waiter := connect(t, url), connect(t, url)
	first, resumed, err := runs.Claim(ctx, owner, "default", fileRun())
	if err != nil || resumed {
		t.Fatalf("first claim: %+v, resumed %v, %v", first, resumed, err)
	}
	ch := claimAsync(waiter, runs.ClaimOptions{Wait: 20 * time.Second, Poll: 10 * time.Millisecond})
	select {
	case c := <-ch:
		t.Fatalf("runs.Claim did not wait for the run's owner: %+v, resumed %v, %v", c.run, c.resumed, c.err)
	case <-time.After(300 * time.Millisecond):
	}
	owner.Close(ctx) // as the server does once it notices that the owner died
	c := <-ch
	if c.err != nil || !c.resumed || c.run.ID != first.ID {
		t.Fatalf("after the owner's session ended: run %d, resumed %v, %v; want run %d resumed", c.run.ID, c.resumed, c.err, first.ID)
	}
	if n := runCount(t, waiter); n != 1 {
		t.Fatalf("%d runs, want 1", n)
	}
}

// A run that its owner finishes while runs.Claim waits is not resumed: the file
// gets a run of its own.
func TestClaimStartsANewRunWhenTheOwnedRunFinishes(t *testing.T) {
	t.Parallel()
	url := pgtest.ConnString(t)
	ctx := context.Background()
	owner, waiter := connect(t, url), connect(t, url)
	first, _, err := runs.Claim(ctx, owner, "default", fileRun())
	if err != nil {
		t.Fatal(err)
	}
	ch := claimAsync(waiter, runs.ClaimOptions{Wait: 20 * time.Second, Poll: 10 * time.Millisecond})
	time.Sleep(100 * time.Millisecond)
	if err := runs.Finish(ctx, owner, "default", first.ID); err != nil {
		t.Fatal(err)
	}
	if err := runs.Release(ctx, owner, first.ID); err != nil {
		t.Fatal(err)
	}
	c := <-ch
	if c.err != nil || c.resumed || c.run.ID == first.ID {
		t.Fatalf("after the owner finished: run %d, resumed %v, %v; want a new run", c.run.ID, c.resumed, c.err)
	}
}

// A run whose owner stays alive for longer than the wait is neither resumed
// nor joined by a second run: runs.Claim gives up with runs.ErrBusy and writes nothing.
func TestClaimGivesUpOnALiveOwnerWithErrBusy(t *testing.T) {
	t.Parallel()
	url := pgtest.ConnString(t)
	ctx := context.Background()
	owner, waiter := connect(t, url), connect(t, url)
	first, _, err := runs.Claim(ctx, owner, "default", fileRun())
	if err != nil {
		t.Fatal(err)
	}
	c := <-claimAsync(waiter, runs.ClaimOptions{Wait: 200 * time.Millisecond, Poll: 10 * time.Millisecond})
	if !errors.Is(c.err, runs.ErrBusy) {
		t.Fatalf("runs.Claim with the run owned by a live session: run %d, resumed %v, %v; want runs.ErrBusy", c.run.ID, c.resumed, c.err)
	}
	if pid := fmt.Sprintf("server process %d ", owner.PgConn().PID()); !strings.Contains(c.err.Error(), pid) {
		t.Errorf("the error does not name the owner's %s: %v", pid, c.err)
	}
	if n := runCount(t, waiter); n != 1 {
		t.Fatalf("%d runs, want only run %d", n, first.ID)
	}
	got, err := runs.Get(ctx, waiter, "default", first.ID)
	if err != nil || got.Status != runs.Running {
		t.Fatalf("run %d: %+v, %v; want it shown running while its owner lives", first.ID, got, err)
	}
	owner.Close(ctx)
	// The server ends the session a moment after the client hangs up.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		got, err := runs.Get(ctx, waiter, "default", first.ID)
		if err == nil && got.Status == runs.Interrupted {
			break
		}
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("run %d after its owner's session ended: %+v, %v; want it shown interrupted", first.ID, got, err)
		}
	}
}

// Processes that claim one file at the same moment start one run between
// them: the others find it owned and wait. Without the file's claim lock
// two of them could each find no run, each start one and share the file's
// records, each posting some (what the distributed scenario once showed as
// 7 and 23 posted of 30).
func TestClaimsOfOneFileAtOnceStartOneRun(t *testing.T) {
	t.Parallel()
	url := pgtest.ConnString(t)
	const n = 8
	conns := make([]*pgx.Conn, n)
	for i := range conns {
		conns[i] = connect(t, url)
	}
	for round := range 5 {
		start := make(chan struct{})
		chs := make([]chan claimed, n)
		for i, conn := range conns {
			ch := make(chan claimed, 1)
			chs[i] = ch
			go func() {
				<-start
				r, resumed, err := runs.ClaimWith(context.Background(), conn, "default", fileRun(), runs.ClaimOptions{Wait: 300 * time.Millisecond, Poll: 10 * time.Millisecond})
				ch <- claimed{r, resumed, err}
			}()
		}
		close(start)
		var won []int64
		var winner *pgx.Conn
		for i, ch := range chs {
			c := <-ch
			switch {
			case c.err == nil && !c.resumed:
				won, winner = append(won, c.run.ID), conns[i]
			case c.err == nil:
				t.Fatalf("round %d: run %d resumed, but no run was interrupted", round, c.run.ID)
			case !errors.Is(c.err, runs.ErrBusy):
				t.Fatalf("round %d: %v", round, c.err)
			}
		}
		if len(won) != 1 {
			t.Fatalf("round %d: %d claims started runs %v, want 1 new run and %d waiting until busy", round, len(won), won, n-1)
		}
		if got := runCount(t, winner); got != int64(round+1) {
			t.Fatalf("round %d: %d runs, want %d", round, got, round+1)
		}
		// The run finishes, so the next round's claims start afresh.
		ctx := context.Background()
		if err := runs.Finish(ctx, winner, "default", won[0]); err != nil {
			t.Fatal(err)
		}
		if err := runs.Release(ctx, winner, won[0]); err != nil {
			t.Fatal(err)
		}
	}
}

// A rejected run is finished when it is written, keeps its reasons (a long
// one clipped), and is never resumed: the next runs.Claim of the same bytes
// starts a run of its own.
func TestRejectedRunKeepsItsReasonsAndIsNeverResumed(t *testing.T) {
	conn := connect(t, pgtest.ConnString(t))
	ctx := context.Background()
	r := fileRun()
	long := "line 2: " + strings.Repeat("x", 3*2000)
	if err := runs.Reject(ctx, conn, "default", &r, []string{"line 1: bad", long}); err != nil {
		t.Fatal(err)
	}
	got, err := runs.Get(ctx, conn, "default", r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != runs.Rejected || got.FinishedAt == nil || len(got.Errors) != 2 || got.Errors[0] != "line 1: bad" {
		t.Fatalf("rejected run reads back as %+v", got)
	}
	if n := len(got.Errors[1]); n > 2000+40 || !strings.HasPrefix(got.Errors[1], "line 2: ") {
		t.Fatalf("a long reason is stored as %d bytes: %.60q", n, got.Errors[1])
	}
	claimedRun, resumed, err := runs.Claim(ctx, conn, "default", fileRun())
	if err != nil {
		t.Fatal(err)
	}
	if resumed || claimedRun.ID == r.ID {
		t.Fatalf("runs.Claim resumed rejected run %d", r.ID)
	}
	if n := runCount(t, conn); n != 2 {
		t.Fatalf("%d runs, want the rejected one and a new one", n)
	}
}
