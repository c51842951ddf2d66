package metrics

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A failed run must not make the job look fresh, nor forget when it last
// succeeded: an alert on staleness depends on both.
func TestFailedRunKeepsTheLastSuccess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "textfile", "ingest.prom")
	ok := time.Unix(1_796_000_000, 0)
	s := New("ingest")
	s.AddFile(File{Name: "day.ach", Source: "ach", Format: "ach", Status: "done", Records: 3,
		Verdicts: map[string]int64{Posted: 2, Notice: 1}})
	if err := s.Write(path, time.Second, 0, true, ok); err != nil {
		t.Fatal(err)
	}
	if got := previousSuccess(path, "ingest"); got != 1_796_000_000 {
		t.Fatalf("last success %v", got)
	}
	if err := New("ingest").Write(path, time.Second, 1, false, ok.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := previousSuccess(path, "ingest"); got != 1_796_000_000 {
		t.Fatalf("a failed run moved the last success to %v", got)
	}
	if got := previousSuccess(path, "reconcile"); got != 0 {
		t.Fatalf("another command's last success is %v", got)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `clearing_exit_code{command="ingest"} 1`) {
		t.Fatalf("exit code not written:\n%s", data)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("temporary files left beside the metrics file: %v", entries)
	}
}
