package iso8583

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats"
)

// cut feeds data to a framer of kind in pieces of the given sizes
// (repeating the last) and returns what it emitted, rendered.
func cut(kind string, maxBody int, data []byte, sizes ...int) []string {
	f := newFramer(kind, maxBody)
	var out []string
	emit := func(fr frame) {
		if fr.err != nil {
			if fr.err.Line != fr.index || fr.err.Offset != fr.offset {
				out = append(out, fmt.Sprintf("error %d@%d names %d@%d", fr.index, fr.offset, fr.err.Line, fr.err.Offset))
			}
			out = append(out, fmt.Sprintf("error %d@%d dead=%v: %v", fr.index, fr.offset, f.dead, fr.err.Err))
			return
		}
		out = append(out, fmt.Sprintf("message %d@%d %x", fr.index, fr.offset, fr.body))
	}
	for i := 0; len(data) > 0; i++ {
		n := min(sizes[min(i, len(sizes)-1)], len(data))
		f.feed(data[:n], emit)
		data = data[n:]
	}
	f.finish(emit)
	return out
}

func TestFramerIsIndifferentToHowTheStreamIsSplit(t *testing.T) {
	for _, kind := range Framings()[:4] {
		t.Run(kind, func(t *testing.T) {
			data, _ := generated(t, kind, 3, 40)
			if kind == FramingHex {
				data = bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n\n  \n"))
			}
			whole := cut(kind, formats.DefaultMaxLineBytes, data, len(data))
			if len(whole) != 40 || strings.HasPrefix(whole[0], "error") {
				t.Fatalf("%d frames, first %q", len(whole), whole[0])
			}
			rng := rand.New(rand.NewPCG(1, 2))
			for _, sizes := range [][]int{{1}, {2}, {3}, {7}, {4096}, {rng.IntN(50) + 1, rng.IntN(500) + 1, rng.IntN(5) + 1}} {
				if got := cut(kind, formats.DefaultMaxLineBytes, data, sizes...); strings.Join(got, "\n") != strings.Join(whole, "\n") {
					t.Fatalf("split %v differs", sizes)
				}
			}
		})
	}
}

func TestFramer(t *testing.T) {
	tests := []struct {
		name, kind string
		max        int
		data       string
		want       []string
	}{
		{"rdw", FramingRDW, 100, "\x00\x00\x00\x04MSG1\x00\x00\x00\x02ab", []string{
			"message 1@0 4d534731", "message 2@8 6162"}},
		{"rdw ending in a zero RDW", FramingRDW, 100, "\x00\x00\x00\x04MSG1\x00\x00\x00\x00", []string{
			"message 1@0 4d534731"}},
		{"rdw zero RDW before more data", FramingRDW, 100, "\x00\x00\x00\x00\x00\x00\x00\x04MSG1", []string{
			"error 1@0 dead=true: iso8583: framing error: rdw: a zero-length RDW, which ends a file, is followed by more data"}},
		{"rdw truncated prefix", FramingRDW, 100, "\x00\x00\x00\x04MSG1\x00\x00", []string{
			"message 1@0 4d534731", "error 2@8 dead=true: iso8583: framing error: rdw: the file ends inside a length prefix (2 of 4 bytes)"}},
		{"rdw truncated message", FramingRDW, 100, "\x00\x00\x00\x09MSG1", []string{
			"error 1@0 dead=true: iso8583: framing error: rdw: the message announces 9 bytes but the file ends after 4"}},
		{"rdw over the limit", FramingRDW, 3, "\x00\x00\x00\x04MSG1", []string{
			"error 1@0 dead=true: iso8583: framing error: rdw: the RDW announces 4 bytes, more than the limit of 3 (formats: input exceeds a limit)"}},
		{"len2", FramingLen2, 100, "\x00\x04MSG1\x00\x01z", []string{"message 1@0 4d534731", "message 2@6 7a"}},
		{"len2 empty message", FramingLen2, 100, "\x00\x00\x00\x04MSG1", []string{
			"error 1@0 dead=true: iso8583: framing error: len2: a zero-length message"}},
		{"ascii4 empty message", FramingASCII4, 100, "0000", []string{
			"error 1@0 dead=true: iso8583: framing error: ascii4: a zero-length message"}},
		{"ascii4", FramingASCII4, 100, "0004MSG10001z", []string{"message 1@0 4d534731", "message 2@8 7a"}},
		{"ascii4 not digits", FramingASCII4, 100, "00x4MSG1", []string{
			"error 1@0 dead=true: iso8583: framing error: ascii4: the length prefix is not 4 ASCII digits"}},
		{"hex", FramingHex, 100, "4d534731\n\n  7A \r\n6162", []string{
			"message 1@0 4d534731", "message 2@10 7a", "message 3@17 6162"}},
		{"hex odd digits", FramingHex, 100, "4d53473\n7a\n", []string{
			"error 1@0 dead=false: iso8583: framing error: hex: an odd number of hex digits", "message 2@8 7a"}},
		{"hex not hex", FramingHex, 100, "4d5347ZZ\n7a\n", []string{
			"error 1@0 dead=false: iso8583: framing error: hex: a character that is not a hex digit", "message 2@9 7a"}},
		{"hex line over the limit", FramingHex, 1, strings.Repeat("7a", 40) + "\n7a\n", []string{
			"error 1@0 dead=false: iso8583: framing error: hex: a line longer than 66 characters (formats: input exceeds a limit)",
			"message 2@81 7a"}},
		{"raw", FramingRaw, 100, "MSG1", []string{"message 1@0 4d534731"}},
		{"raw empty", FramingRaw, 100, "", []string{"error 1@0 dead=true: iso8583: framing error: raw: the file is empty"}},
		{"raw over the limit", FramingRaw, 3, "MSG1", []string{
			"error 1@0 dead=true: iso8583: framing error: raw: the file is larger than the 3-byte limit of one message (formats: input exceeds a limit)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, size := range []int{1, 3, 1 << 20} {
				got := cut(tt.kind, tt.max, []byte(tt.data), size)
				if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
					t.Fatalf("pieces of %d:\n got %q\nwant %q", size, got, tt.want)
				}
			}
		})
	}
}

func TestFramingErrorsMatchSentinels(t *testing.T) {
	res := readAll(t, []byte("\x00\x00\x00\x09MSG1"), testOptions(FramingRDW))
	if len(res.errs) != 1 || !errors.Is(res.errs[0], ErrFraming) {
		t.Fatalf("errors %v", res.errs)
	}
	res = readAll(t, bytes.Repeat([]byte("x"), 70), Options{Framing: FramingRaw, Hasher: testHasher,
		Limits: formats.Limits{MaxLineBytes: 64}})
	if len(res.errs) != 1 || !errors.Is(res.errs[0], formats.ErrTooLarge) || !errors.Is(res.errs[0], ErrFraming) {
		t.Fatalf("errors %v", res.errs)
	}
}
