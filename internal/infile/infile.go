// Package infile opens an input file for one front-to-back read with limits:
// a regular file (after following links), not empty, no larger than a
// maximum checked before reading, hashed with SHA-256 on the way, and
// refused if it changes while it is read.
package infile

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"os"
	"time"
)

// DefaultMaxBytes bounds the size of one input file. The limit trips on the
// file's size before anything is read.
const DefaultMaxBytes int64 = 1 << 30

// File is an open input file being read once, front to back, with its
// SHA-256 computed on the way.
type File struct {
	f       *os.File
	size    int64
	modTime time.Time
	sum     hash.Hash
	counted int64
	r       io.Reader
}

// Open opens path for one read: a regular file (after following links), not
// empty, no larger than max bytes.
func Open(path string, max int64) (*File, error) {
	// Look before opening: opening a named pipe waits for a writer, and a
	// device can be endless. Look again after: the path may have changed.
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regular(path, st); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if st, err = f.Stat(); err == nil {
		err = regular(path, st)
	}
	switch {
	case err != nil:
	case st.Size() == 0:
		err = fmt.Errorf("%s is empty", path)
	case st.Size() > max:
		err = fmt.Errorf("%s is %d bytes, over the limit of %d bytes (--max-file-bytes)", path, st.Size(), max)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	in := &File{f: f, size: st.Size(), modTime: st.ModTime(), sum: sha256.New()}
	// Reading one byte past the size tells a file that grew from one that
	// did not; the check after parsing turns growth into a rejection.
	in.r = io.TeeReader(io.LimitReader(f, max+1), countingWriter{in})
	return in, nil
}

// regular returns an error unless st is a regular file's.
func regular(path string, st os.FileInfo) error {
	switch {
	case st.IsDir():
		return fmt.Errorf("%s is a directory, not a file", path)
	case !st.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file (%s)", path, st.Mode().Type())
	}
	return nil
}

type countingWriter struct{ in *File }

func (c countingWriter) Write(p []byte) (int, error) {
	c.in.sum.Write(p)
	c.in.counted += int64(len(p))
	return len(p), nil
}

// Size is the file's size when it was opened.
func (in *File) Size() int64 { return in.size }

// Done is how many bytes of the file have been read so far.
func (in *File) Done() int64 { return in.counted }

// Read reads the file's next bytes.
func (in *File) Read(p []byte) (int, error) { return in.r.Read(p) }

// Peek returns up to n bytes from the front of the unread input without
// consuming them.
func (in *File) Peek(n int) ([]byte, error) {
	buf := make([]byte, n)
	k, err := io.ReadFull(in.r, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	buf = buf[:k]
	in.r = io.MultiReader(bytes.NewReader(buf), in.r)
	return buf, nil
}

// Finish reads whatever the format reader left unread (trailing padding,
// say) into the checksum, checks that the file did not change while it was
// read (a file still being written must not be half ingested), and returns
// its SHA-256.
func (in *File) Finish() ([]byte, error) {
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

// Checksum reads whatever is left of the file into the checksum and returns
// the SHA-256 of the whole file, or nil when it cannot tell one: a read
// failed, or the file is not the size it was when it was opened. It is for
// a file that is refused after it was opened, whose bytes were not all read.
func (in *File) Checksum() []byte {
	if _, err := io.Copy(io.Discard, in.r); err != nil {
		return nil
	}
	st, err := in.f.Stat()
	if err != nil || in.counted != in.size || st.Size() != in.size || !st.ModTime().Equal(in.modTime) {
		return nil
	}
	return in.sum.Sum(nil)
}

// Probe says what it can of a file that Open refused, without reading it:
// its size when it is a regular file (0 otherwise, or when it cannot be
// found), and its SHA-256 when that is known without reading, which is when
// it is empty.
func Probe(path string) (size int64, sum []byte) {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return 0, nil
	}
	if st.Size() == 0 {
		empty := sha256.Sum256(nil)
		return 0, empty[:]
	}
	return st.Size(), nil
}

// Close closes the file.
func (in *File) Close() error { return in.f.Close() }
