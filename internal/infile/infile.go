package ingest

import (
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"os"
	"time"
)

// DefaultMaxFileBytes bounds the size of one input file. The limit trips on
// the file's size before anything is read.
const DefaultMaxFileBytes int64 = 1 << 30

// input is an open file being read once, front to back, with its SHA-256
// computed on the way.
type input struct {
	f       *os.File
	size    int64
	modTime time.Time
	sum     hash.Hash
	counted int64
	r       io.Reader
}

// openInput opens path for ingest: a regular file (after following links)
// no larger than max.
func openInput(path string, max int64) (*input, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	switch {
	case st.IsDir():
		f.Close()
		return nil, fmt.Errorf("%s is a directory, not a file", path)
	case !st.Mode().IsRegular():
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file (%s)", path, st.Mode().Type())
	case st.Size() == 0:
		f.Close()
		return nil, fmt.Errorf("%s is empty", path)
	case st.Size() > max:
		f.Close()
		return nil, fmt.Errorf("%s is %d bytes, over the limit of %d (--max-file-bytes)", path, st.Size(), max)
	}
	in := &input{f: f, size: st.Size(), modTime: st.ModTime(), sum: sha256.New()}
	// Reading one byte past the size tells a file that grew from one that
	// did not; the check after parsing turns growth into a rejection.
	in.r = io.TeeReader(io.LimitReader(f, max+1), countingWriter{in})
	return in, nil
}

type countingWriter struct{ in *input }

func (c countingWriter) Write(p []byte) (int, error) {
	c.in.sum.Write(p)
	c.in.counted += int64(len(p))
	return len(p), nil
}

func (in *input) Read(p []byte) (int, error) { return in.r.Read(p) }

// finish reads whatever the format reader left unread (trailing padding,
// say) into the checksum, and checks that the file did not change while it
// was read: a file still being written must not be half ingested.
func (in *input) finish() ([]byte, error) {
	if _, err := io.Copy(io.Discard, in.r); err != nil {
		return nil, err
	}
	st, err := in.f.Stat()
	if err != nil {
		return nil, err
	}
	if in.counted != in.size || st.Size() != in.size || !st.ModTime().Equal(in.modTime) {
		return nil, fmt.Errorf("the file changed while it was being read (%d bytes at start, %d read, %d now); ingest it once it is complete", in.size, in.counted, st.Size())
	}
	return in.sum.Sum(nil), nil
}

func (in *input) Close() error { return in.f.Close() }
