package output

import (
	"bytes"
	"strings"
	"testing"
)

func TestCSVNeutralisesFormulas(t *testing.T) {
	var b bytes.Buffer
	r := Rows{Header: []string{"a", "b"}}
	r.Add("=HYPERLINK(\"x\")", "-50")
	r.Add("+1", "@SUM(A1)")
	r.Add("plain", "12.50")
	r.Add("-0.50", "-1+2")
	r.Add("-2+3+cmd|' /C calc'!A0", "-.5")
	if err := WriteCSV(&b, r); err != nil {
		t.Fatal(err)
	}
	want := "a,b\n'=HYPERLINK(\"\"x\"\"),-50\n'+1,'@SUM(A1)\nplain,12.50\n-0.50,'-1+2\n'-2+3+cmd|' /C calc'!A0,'-.5\n"
	// encoding/csv quotes the cell holding quotes.
	want = strings.Replace(want, `'=HYPERLINK(""x"")`, `"'=HYPERLINK(""x"")"`, 1)
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

func TestTableIsASCII(t *testing.T) {
	var b bytes.Buffer
	r := Rows{Header: []string{"file", "posted"}}
	r.Add("day1.ach", "12")
	if err := WriteTable(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "day1.ach") || !strings.Contains(out, "posted") {
		t.Fatalf("table lacks content:\n%s", out)
	}
	for _, r := range out {
		if r > 127 {
			t.Fatalf("table has non-ASCII %q:\n%s", r, out)
		}
	}
}
