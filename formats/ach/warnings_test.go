package ach

import (
	"strings"
	"testing"
)

// TestMetadataWarnings checks that each break of the format that no key,
// amount, total or count depends on is a warning naming its line, and that
// the file's entries are still all read.
func TestMetadataWarnings(t *testing.T) {
	base := lines(testFile(t, testEntries()))
	want := len(mustRead(t, join(base)))
	addenda05 := "705" + "PAID \x93IN FULL\x94" + strings.Repeat(" ", 80-15) + "0001" + "0000001"
	withAddenda := replaced(replaced(inserted(base, 4, addenda05), 3, func(l string) string { return setField(l, 78, "1") }),
		6, func(l string) string { return setField(l, 4, "000003") })
	withAddenda = replaced(withAddenda, 11, func(l string) string { return setField(l, 13, "00000005") })
	cases := []struct {
		name string
		data []byte
		code string
		line int64
	}{
		{"destination check digit", join(replaced(base, 1, func(l string) string { return setField(l, 3, " 231380105") })), WarnFileHeader, 1},
		{"priority code 00", join(replaced(base, 1, func(l string) string { return setField(l, 1, "00") })), WarnPriorityCode, 1},
		{"priority code blank", join(replaced(base, 1, func(l string) string { return setField(l, 1, "  ") })), WarnPriorityCode, 1},
		{"creation date odd", join(replaced(base, 1, func(l string) string { return setField(l, 23, "26-11-") })), WarnCreationDate, 1},
		{"only batch numbered 0", join(replaced(replaced(base, 2, func(l string) string { return setField(l, 87, "0000000") }), 5, func(l string) string { return setField(l, 87, "0000000") })), WarnBatchNumber, 2},
		{"batch numbers repeat", join(replaced(replaced(base, 6, func(l string) string { return setField(l, 87, "0000001") }), 9, func(l string) string { return setField(l, 87, "0000001") })), WarnBatchNumber, 6},
		{"Windows-1252 quotes in payment related information", join(withAddenda), WarnFreeText, 4},
		{"UTF-8 in an individual name", join(replaced(base, 3, func(l string) string { return setRunes(l, 54, "JOSÉ") })), WarnFreeText, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rd := NewReader(strings.NewReader(string(tc.data)), Options{Hasher: testHasher})
			n := 0
			for {
				_, err := rd.Next()
				if err != nil {
					if err.Error() != "EOF" {
						t.Fatalf("refused: %v", err)
					}
					break
				}
				n++
			}
			if n != want {
				t.Errorf("%d records, want %d", n, want)
			}
			ws := rd.Warnings()
			found := false
			for _, w := range ws {
				found = found || (w.Code == tc.code && w.Line == tc.line)
			}
			if !found {
				t.Errorf("no %s warning on line %d: %v", tc.code, tc.line, ws)
			}
		})
	}
}

// TestTrimmedRecordsRead checks that a file whose records lost their
// trailing spaces reads as the padded file does.
func TestTrimmedRecordsRead(t *testing.T) {
	base := lines(testFile(t, testEntries()))
	trimmed := make([]string, len(base))
	for i, l := range base {
		trimmed[i] = strings.TrimRight(l, " ")
	}
	if got, want := len(mustRead(t, join(trimmed))), len(mustRead(t, join(base))); got != want {
		t.Fatalf("%d records, want %d", got, want)
	}
}
