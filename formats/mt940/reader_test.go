package mt940

import (
	"errors"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats"
)

func TestReaderRefusesTheZeroHasher(t *testing.T) {
	r := NewReader(strings.NewReader(":20:X\n"), Options{})
	if _, err := r.Next(); !errors.Is(err, ErrNoHasher) {
		t.Fatalf("Next = %v, want ErrNoHasher", err)
	}
}

func TestReaderNotMT940IsNotThisFormat(t *testing.T) {
	for _, in := range []string{"", "hello\nworld\n", "01,SENDER,RECEIVER,261129,1200,1,,,2/\n", "<Document/>"} {
		res := readAll(t, in, Options{})
		if !errors.Is(res.final, formats.ErrNotThisFormat) {
			t.Errorf("%q: final %v, want ErrNotThisFormat", in, res.final)
		}
	}
}

func TestReaderTypeCodeOverride(t *testing.T) {
	in := ":20:R\n:25:123\n:28C:1/1\n:60F:C261129EUR0,\n:61:261129D1,00NTRFNONREF//B1\n:61:261129D2,00NMSCNONREF//B2\n:62F:D261129EUR3,00\n"
	res := readAll(t, in, Options{TypeCodes: map[string]formats.LineType{"MSC": formats.Fee}})
	if len(res.records) != 2 || res.records[0].LineType != formats.Payment || res.records[1].LineType != formats.Fee {
		t.Fatalf("records %v, final %v", res.records, res.final)
	}
}

func TestReaderLineLimit(t *testing.T) {
	in := ":20:R\n:25:" + strings.Repeat("9", 200) + "\n"
	res := readAll(t, in, Options{Limits: formats.Limits{MaxLineBytes: 64}})
	if len(res.errs) == 0 || !errors.Is(res.errs[0], formats.ErrTooLarge) || res.errs[0].Line != 2 {
		t.Fatalf("errors %v", res.errs)
	}
}
