package infile

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func write(t *testing.T, name, data string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadsOnceAndHashes(t *testing.T) {
	in, err := Open(write(t, "f", "hello"), 10)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	head, err := in.Peek(2)
	if err != nil || string(head) != "he" {
		t.Fatalf("peek: %q, %v", head, err)
	}
	all, err := io.ReadAll(in)
	if err != nil || string(all) != "hello" {
		t.Fatalf("read %q, %v", all, err)
	}
	sum, err := in.Finish()
	if err != nil || len(sum) != 32 {
		t.Fatalf("finish: %x, %v", sum, err)
	}
}

// A file still being written must not be half ingested: growth while it
// is read is a rejection, not a shorter file.
func TestAFileThatGrowsWhileReadIsRefused(t *testing.T) {
	p := write(t, "growing", "first part\n")
	in, err := Open(p, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if _, err := in.Peek(5); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("second part\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := in.Finish(); err == nil || !strings.Contains(err.Error(), "changed while it was being read") {
		t.Fatalf("a file that grew while read: %v", err)
	}
}

func TestRefusesWhatIsNotAnInputFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{dir, "is a directory"},
		{fifo, "not a regular file"},
		{write(t, "empty", ""), "is empty"},
		{write(t, "big", "12345678901"), "over the limit of 10 bytes"},
		{filepath.Join(dir, "missing"), "no such file"},
	} {
		if in, err := Open(tc.path, 10); err == nil || !strings.Contains(err.Error(), tc.want) {
			if in != nil {
				in.Close()
			}
			t.Errorf("%s: %v, want %q", tc.path, err, tc.want)
		}
	}
}
