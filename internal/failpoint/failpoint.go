// Package failpoint names the places in the code where a crash changes what
// is known, so that tests can kill the real binary exactly there. A point
// does nothing unless CLEARING_FAILPOINTS enables it; it is read once.
//
//	CLEARING_FAILPOINTS=ingest.chunk-committed=kill@2,approve.recorded=error
//
// enables two points: the second time the first is reached the process sends
// itself SIGKILL (no deferred function runs, no transaction commits), and the
// second returns an error each time it is reached.
package failpoint

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// ErrInjected is returned by an enabled point whose action is "error".
var ErrInjected = errors.New("failpoint: injected failure")

// The named points. Tests enumerate All to make sure each is exercised.
const (
	IngestStaged         = "ingest.staged"          // records staged, before the chunk's inserts
	IngestInserted       = "ingest.inserted"        // chunk inserted and audited, before commit
	IngestChunkCommitted = "ingest.chunk-committed" // after a chunk commits, before the next
	IngestCommitted      = "ingest.committed"       // every chunk committed, before the run is marked done
	StatementImported    = "statement.imported"     // statement lines written, before the run is recorded
	ApproveRecorded      = "approve.recorded"       // a correction's approval recorded, before its posting commits
)

// All lists every named point.
var All = []string{IngestStaged, IngestInserted, IngestChunkCommitted, IngestCommitted, StatementImported, ApproveRecorded}

type point struct {
	action string // "kill" or "error"
	nth    int    // act on this hit; 0 means every hit
	hits   int
}

var (
	once   sync.Once
	mu     sync.Mutex
	points map[string]*point
)

func load() {
	points = map[string]*point{}
	for _, spec := range strings.Split(os.Getenv("CLEARING_FAILPOINTS"), ",") {
		name, action, ok := strings.Cut(strings.TrimSpace(spec), "=")
		if !ok {
			continue
		}
		p := &point{action: action}
		if a, n, ok := strings.Cut(action, "@"); ok {
			p.action = a
			p.nth, _ = strconv.Atoi(n)
		}
		points[name] = p
	}
}

// Hit marks that execution reached the named point. It returns nil unless
// the point is enabled; an enabled "kill" point does not return.
func Hit(name string) error {
	once.Do(load)
	mu.Lock()
	p, ok := points[name]
	if !ok {
		mu.Unlock()
		return nil
	}
	p.hits++
	fire := p.nth == 0 || p.hits == p.nth
	mu.Unlock()
	if !fire {
		return nil
	}
	switch p.action {
	case "kill":
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // SIGKILL cannot be caught; wait for it to land.
	case "error":
		return fmt.Errorf("%w at %s", ErrInjected, name)
	}
	return nil
}
