package output

import (
	"errors"
	"io"
	"sync/atomic"
	"syscall"
)

// PipeWriter passes writes to W and remembers whether one failed because
// the reader went away (EPIPE), as when stdout is piped into 'head -1'. The
// command's own write errors still reach it; main asks Broken afterwards to
// tell a closed pipe from a failure of the work.
type PipeWriter struct {
	W      io.Writer
	broken atomic.Bool
}

// Write writes p to W.
func (p *PipeWriter) Write(b []byte) (int, error) {
	n, err := p.W.Write(b)
	if errors.Is(err, syscall.EPIPE) {
		p.broken.Store(true)
	}
	return n, err
}

// Broken reports whether a write found the pipe closed.
func (p *PipeWriter) Broken() bool { return p.broken.Load() }
