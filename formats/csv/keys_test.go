package csv

import (
	"strings"
	"testing"
)

const twoColumnKeyMapping = `
source = "psp2"
key = ["shop", "order"]
amount = "amount"
amount_unit = "major"
currency_fixed = "USD"
value_date = "date"
`

// TestKeyColumnsWithSeparatorDoNotCollide guards the collision of
// ("shop:1", "A") with ("shop", "1:A"): joined as they were, both were
// csv:psp2:shop:1:A, so the second row was taken for the first.
func TestKeyColumnsWithSeparatorDoNotCollide(t *testing.T) {
	m := mustMapping(t, twoColumnKeyMapping)
	in := "shop,order,amount,date\nshop:1,A,1.00,2026-11-29\nshop,1:A,2.00,2026-11-29\nshop,A,3.00,2026-11-29\n"
	recs, bad, err := readAll(t, m, in, opts())
	if err != nil || len(bad) != 0 || len(recs) != 3 {
		t.Fatalf("records %v, errors %v, %v", recs, bad, err)
	}
	want := []string{"csv:psp2:shop%3A1:A", "csv:psp2:shop:1%3AA", "csv:psp2:shop:A"}
	for i, r := range recs {
		if r.Key != want[i] {
			t.Errorf("row %d: key %q, want %q", i+1, r.Key, want[i])
		}
	}
	// The reference is matched on, never an identity: it keeps the values.
	if recs[0].Reference != "shop:1:A" || recs[2].Reference != "shop:A" {
		t.Errorf("references %q, %q", recs[0].Reference, recs[2].Reference)
	}
}

// TestKeyValueCannotReadAsDerivedKey guards an id such as "X:return": its
// key ended in ":return", which reads as the return of csv:psp:X.
func TestKeyValueCannotReadAsDerivedKey(t *testing.T) {
	m := mustMapping(t, simpleMapping)
	in := "id,date,amount,currency,account\nX,2026-11-29,1.00,USD,1234\nX:return,2026-11-29,1.00,USD,1234\nX:correction:unbooked_fee,2026-11-29,1.00,USD,1234\n"
	recs, bad, err := readAll(t, m, in, opts())
	if err != nil || len(bad) != 0 || len(recs) != 3 {
		t.Fatalf("records %v, errors %v, %v", recs, bad, err)
	}
	want := []string{"csv:psp:X", "csv:psp:X%3Areturn", "csv:psp:X%3Acorrection%3Aunbooked_fee"}
	for i, r := range recs {
		if r.Key != want[i] {
			t.Errorf("row %d: key %q, want %q", i+1, r.Key, want[i])
		}
		if i > 0 && strings.HasPrefix(r.Key, recs[0].Key+":") {
			t.Errorf("row %d: key %q reads as derived from %q", i+1, r.Key, recs[0].Key)
		}
	}
}

func TestKeyComponent(t *testing.T) {
	cases := []struct{ in, want string }{
		// Ordinary values, and a '%' that cannot read as an escape, keep
		// the key they had before keys were escaped.
		{"A-1", "A-1"},
		{"INV 2026/11", "INV 2026/11"},
		{"50%", "50%"},
		{"50%off", "50%off"},
		{"%g1", "%g1"},
		{"a:b", "a%3Ab"},
		{"%3A", "%253A"},
		{"%3a:", "%253a%3A"},
		{"%41", "%2541"},
		{"%%3A", "%%253A"},
		{"%:", "%%3A"},
		{"%2:", "%2%3A"},
	}
	for _, tc := range cases {
		if got := KeyComponent(tc.in); got != tc.want {
			t.Errorf("KeyComponent(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if back := unescapeComponent(tc.want); back != tc.in {
			t.Errorf("decoding %q gives %q, want %q", tc.want, back, tc.in)
		}
	}
}

// FuzzKeyComponentIsReversible checks that escaped components joined with
// ':' split and decode back to the values: two different lists of values
// can then never make one key.
func FuzzKeyComponentIsReversible(f *testing.F) {
	for _, s := range []string{"shop:1\x00A", "shop\x001:A", "%3A\x00:", "%\x00%%2", "50%\x00off"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, joined string) {
		values := strings.Split(joined, "\x00")
		escaped := make([]string, len(values))
		for i, v := range values {
			escaped[i] = KeyComponent(v)
		}
		parts := strings.Split(strings.Join(escaped, ":"), ":")
		if len(parts) != len(values) {
			t.Fatalf("%q: %d components, want %d", values, len(parts), len(values))
		}
		for i, p := range parts {
			if got := unescapeComponent(p); got != values[i] {
				t.Fatalf("%q: component %d decodes to %q", values, i, got)
			}
		}
	})
}

// unescapeComponent is percent-decoding, as a user reading a key does it.
func unescapeComponent(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}
