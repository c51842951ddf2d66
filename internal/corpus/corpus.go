// Package corpus finds the shared corpus of real third-party clearing files
// that tests read (never copy) through CLEARING_CORPUS.
package corpus

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the corpus folder named by CLEARING_CORPUS, joined with the
// given path elements. When the corpus is absent the test is skipped with a
// message, except under CI=true, where a missing corpus fails the test.
func Dir(t testing.TB, elem ...string) string {
	t.Helper()
	root := os.Getenv("CLEARING_CORPUS")
	if root == "" {
		missing(t, "CLEARING_CORPUS is not set")
		return ""
	}
	p := filepath.Join(append([]string{root}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		missing(t, err.Error())
		return ""
	}
	return p
}

// File returns the path of one corpus file, like Dir.
func File(t testing.TB, elem ...string) string {
	t.Helper()
	return Dir(t, elem...)
}

// Read returns the bytes of one corpus file.
func Read(t testing.TB, elem ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(File(t, elem...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("the shared corpus is required under CI=true: %s", why)
	}
	t.Skipf("shared corpus not available (%s); set CLEARING_CORPUS to run this test", why)
}
