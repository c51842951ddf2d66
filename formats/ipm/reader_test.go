package ipm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/clearing-dev/clearing/formats"
)

const testARN = "05454546304001603000087" // a corpus ARN; its check digit is 7

func header(id string) Message {
	return Message{MTI: "1644", Fields: map[int]string{24: "697", 71: "00000001"}, PDS: []PDS{{"0105", id}, {"0122", "P"}}}
}

func trailer(id, de71, total, count string) Message {
	return Message{MTI: "1644", Fields: map[int]string{24: "695", 71: de71},
		PDS: []PDS{{"0105", id}, {"0301", total}, {"0306", count}}}
}

func presentment(arn, de71, amount string) Message {
	return Message{MTI: "1240", Fields: map[int]string{2: "5555550396723662", 3: "000000", 4: amount, 12: "261030123144",
		24: "200", 31: arn, 49: "840", 71: de71, 93: "013579", 94: "024680"},
		PDS: []PDS{{"0148", "8402"}, {"0158", "DMC40008407526110201    NNNNNN"}}}
}

const fid = "0012611020000001357900001"

// goodFile is a header, two presentments and a trailer.
func goodFile() []Message {
	return []Message{header(fid), presentment(testARN, "00000002", "000000019722"),
		presentment("05454546304001603000012", "00000003", "000000000100"),
		trailer(fid, "00000004", "0000000000019822", "00000004")}
}

func TestReadsAWrittenFile(t *testing.T) {
	for _, blocked := range []bool{true, false} {
		for _, enc := range Encodings() {
			res := readAll(t, writeFile(t, blocked, enc, goodFile()...), testOptions())
			if !res.ok() || len(res.recs) != 4 {
				t.Fatalf("blocked=%v %s: %d records, errors %v, final %v", blocked, enc, len(res.recs), res.errs, res.final)
			}
			r := res.recs[1]
			if r.Key != "ipm:"+testARN+":1240:200" || r.Kind != formats.Clearing || r.Amount != 19722 || r.Currency != "USD" ||
				r.Direction != formats.Debit || r.ValueDate != formats.Date(2026, 11, 2) || r.Reference != testARN ||
				r.Account.Last4 != "3662" || r.Offset != 78 {
				t.Errorf("blocked=%v %s: %+v", blocked, enc, r)
			}
		}
	}
}

// TestReadsOneByteAtATime guards the framers against pieces that cut a
// length prefix, a record or a block trailer anywhere.
func TestReadsOneByteAtATime(t *testing.T) {
	for _, blocked := range []bool{true, false} {
		data, sum := generate(t, GenerateOptions{Seed: 5, Presentments: 30, Blocked: blocked, Lifecycle: true})
		rd, err := NewReader(iotest.OneByteReader(bytes.NewReader(data)), testOptions())
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for {
			_, err := rd.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("blocked=%v: %v", blocked, err)
			}
			n++
		}
		if n != sum.Messages || rd.Blocked() != blocked {
			t.Errorf("blocked=%v: %d records of %d, read as blocked=%v", blocked, n, sum.Messages, rd.Blocked())
		}
	}
}

func TestStoredOffset(t *testing.T) {
	// day1-blocked-ebcdic.ipm message 39: unblocked 18214, 1010 bytes
	// into its block, so 17 block trailers come before it.
	for _, c := range [][2]int64{{0, 0}, {1011, 1011}, {1012, 1014}, {18214, 18248}, {9607, 9625}} {
		if got := storedOffset(c[0]); got != c[1] {
			t.Errorf("storedOffset(%d) = %d, want %d", c[0], got, c[1])
		}
	}
}

func TestLuhnDigit(t *testing.T) {
	for _, arn := range []string{testARN, "05454546304001603990014", "05454546304001603000228"} {
		if luhnDigit(arn[:22]) != arn[22] {
			t.Errorf("%s: check digit %c", arn, luhnDigit(arn[:22]))
		}
	}
}

func TestSplitPDS(t *testing.T) {
	for _, c := range []struct {
		in, want, err string
	}{
		{"", "", ""},
		{"0105003abc0122001P", "0105=abc 0122=P", ""},
		{"0105000", "0105=", ""},
		{"01050", "", "too few"},
		{"01x5003abc", "", "tag is not four digits"},
		{"01050x3abc", "", "length of PDS0105"},
		{"0105009abc", "", "announces 9 characters but 3 remain"},
		{"0105002éü", "0105=éü", ""},
	} {
		var got []string
		err := splitPDS(c.in, func(tag, v string) error { got = append(got, tag+"="+v); return nil })
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.in, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want %q", c.in, err, c.err)
		case c.err == "" && strings.Join(got, " ") != c.want:
			t.Errorf("%q: %q, want %q", c.in, strings.Join(got, " "), c.want)
		}
	}
}

// TestPDSOverflow writes PDSs past DE48's 999 characters, so that one
// subfield continues in DE62, and reads them back.
func TestPDSOverflow(t *testing.T) {
	p := presentment(testARN, "00000002", "000000019722")
	p.PDS = append([]PDS{{"0001", strings.Repeat("A", 990)}}, p.PDS...)
	p.PDS = append(p.PDS, PDS{"0191", "2"})
	fields := map[int]string{}
	if err := packPDS(p.PDS, fields); err != nil {
		t.Fatal(err)
	}
	if _, ok := fields[62]; !ok || len(fields[48]) != 999 {
		t.Fatalf("the PDSs did not overflow into DE62: %d, %v", len(fields[48]), fields[62] != "")
	}
	msgs := goodFile()
	msgs[1] = p
	res := readAll(t, writeFile(t, true, EncodingCP500, msgs...), testOptions())
	if !res.ok() || res.recs[1].ValueDate != formats.Date(2026, 11, 2) {
		t.Fatalf("errors %v, final %v", res.errs, res.final)
	}
	m := message{}
	m.has[48], m.values[48] = true, "0001005ab"
	m.has[62], m.values[62] = true, "cde0002001x"
	if err := m.parsePDS(); err != nil || m.pds.values["0001"] != "abcde" || m.pds.values["0002"] != "x" {
		t.Errorf("a PDS split across DE48 and DE62: %v %v", err, m.pds.values)
	}
}

// TestRefusals: what touches money or identity rejects the file, naming
// the field, the message and the offset.
func TestRefusals(t *testing.T) {
	badARN := testARN[:22] + "1"
	wrongExp := presentment(testARN, "00000002", "000000019722")
	wrongExp.PDS[0].Value = "8403"
	unknownFn := presentment(testARN, "00000002", "000000019722")
	unknownFn.Fields[24] = "999"
	cases := []struct {
		name     string
		msgs     []Message
		sentinel error
		field    string
		offset   int64
		text     string
	}{
		{"bad ARN check digit", []Message{header(fid), presentment(badARN, "00000002", "000000019722"), trailer(fid, "00000003", "0000000000019722", "00000003")},
			ErrInvalid, "DE31", 78, "check digit"},
		{"trailer count", replace(goodFile(), 3, trailer(fid, "00000004", "0000000000019822", "00000005")),
			ErrControl, "PDS0306", 0, "declares 5 messages"},
		{"trailer total", replace(goodFile(), 3, trailer(fid, "00000004", "0000000000019821", "00000004")),
			ErrControl, "PDS0301", 0, "the sum of DE4 is 19822"},
		{"missing trailer", goodFile()[:3], ErrControl, "", 0, "has no trailer"},
		{"before a header", goodFile()[1:], ErrControl, "MTI", 0, "before any file header"},
		{"header inside a logical file", append(goodFile()[:2:2], goodFile()...), ErrControl, "DE24", 0, "has no trailer"},
		{"exponent", replace(goodFile(), 1, wrongExp), ErrInvalid, "PDS0148", 78, "ISO 4217 says 2"},
		{"function code", replace(goodFile(), 1, unknownFn), ErrInvalid, "DE24", 78, "unknown function code 999"},
	}
	for _, c := range cases {
		for _, blocked := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/blocked=%v", c.name, blocked), func(t *testing.T) {
				res := readAll(t, writeFile(t, blocked, EncodingCP500, c.msgs...), testOptions())
				if len(res.errs) == 0 {
					t.Fatalf("accepted; final %v", res.final)
				}
				var pe *formats.ParseError
				errors.As(res.errs[0], &pe)
				if !errors.Is(pe, c.sentinel) || pe.Field != c.field || !strings.Contains(pe.Error(), c.text) || (c.offset > 0 && pe.Offset != c.offset) {
					t.Errorf("error %v; want %v, field %q, offset %d, %q", pe, c.sentinel, c.field, c.offset, c.text)
				}
			})
		}
	}
}

func replace(msgs []Message, i int, m Message) []Message {
	msgs[i] = m
	return msgs
}

// TestFramingRefusals cuts and pads files.
func TestFramingRefusals(t *testing.T) {
	unblocked := writeFile(t, false, EncodingCP500, goodFile()...)
	blocked, _ := generate(t, GenerateOptions{Seed: 1, Presentments: 30, Blocked: true})
	cases := []struct {
		name     string
		data     []byte
		sentinel error
		offset   int64
	}{
		{"no end record", unblocked[:len(unblocked)-4], ErrTruncated, int64(len(unblocked) - 4)},
		{"inside a record", unblocked[:100], ErrTruncated, 78},
		{"inside a length prefix", unblocked[:80], ErrTruncated, 78},
		{"data after the end record", append(append([]byte{}, unblocked...), 0x40), ErrFraming, -1},
		{"blocked, cut inside a record", blocked[:3000], ErrTruncated, -1},
		{"empty", nil, ErrFramingUndetected, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := readAll(t, c.data, testOptions())
			errs := append(res.errs, res.final)
			if res.ok() || !errors.Is(errs[0], c.sentinel) {
				t.Fatalf("errors %v, final %v; want %v", res.errs, res.final, c.sentinel)
			}
			var pe *formats.ParseError
			if c.offset >= 0 && (!errors.As(errs[0], &pe) || pe.Offset != c.offset) {
				t.Errorf("error %v, want offset %d", errs[0], c.offset)
			}
		})
	}
}

// TestBlockTrailersAreNotData: the two bytes after each 1012 are skipped
// whatever they hold.
func TestBlockTrailersAreNotData(t *testing.T) {
	data, sum := generate(t, GenerateOptions{Seed: 2, Presentments: 25, Blocked: true})
	for _, tr := range [][2]byte{{0, 0}, {0xFF, 0x01}} {
		d := append([]byte{}, data...)
		for i := blockData; i < len(d); i += blockSize {
			d[i], d[i+1] = tr[0], tr[1]
		}
		res := readAll(t, d, testOptions())
		if !res.ok() || int64(len(res.recs)) != sum.Messages || !res.rd.Blocked() {
			t.Errorf("trailer % x: %d records, errors %v, final %v", tr, len(res.recs), res.errs, res.final)
		}
	}
}

// TestWarnings: a DE71 out of sequence and a trailer with another file id
// touch no money; they are warnings.
func TestWarnings(t *testing.T) {
	msgs := goodFile()
	msgs[2].Fields[71] = "00000009"
	msgs[3] = trailer("0012611020000001357900002", "00000004", "0000000000019822", "00000004")
	res := readAll(t, writeFile(t, true, EncodingCP500, msgs...), testOptions())
	if !res.ok() {
		t.Fatalf("errors %v, final %v", res.errs, res.final)
	}
	if w := res.rd.Warnings(); len(w) != 2 || !strings.Contains(w[0], "DE71 is 00000009") || !strings.Contains(w[1], "PDS0105") {
		t.Errorf("warnings %q", w)
	}
}

// TestLogicalFilesCheckedApart: each trailer is checked against its own
// logical file, not against the physical file.
func TestLogicalFilesCheckedApart(t *testing.T) {
	f2 := "0012611020000001357900002"
	msgs := append(goodFile(), header(f2), presentment("05454546304001603000228", "00000002", "000000000005"),
		trailer(f2, "00000003", "0000000000019827", "00000007"))
	res := readAll(t, writeFile(t, true, EncodingCP500, msgs...), testOptions())
	if len(res.errs) != 1 || !strings.Contains(res.errs[0].Error(), "declares 7 messages (PDS0306), the logical file has 3") {
		t.Fatalf("errors %v", res.errs)
	}
}

func TestEncodingDetection(t *testing.T) {
	ascii := writeFile(t, false, EncodingLatin1, goodFile()...)
	if ascii[4] != '1' {
		t.Fatalf("the MTI of an ASCII file starts with %x", ascii[4])
	}
	opts := testOptions()
	opts.Encoding = EncodingCP500
	if res := readAll(t, ascii, opts); res.ok() {
		t.Error("an ASCII file read as cp500")
	}
	ebcdic := writeFile(t, false, EncodingCP500, goodFile()...)
	if ebcdic[4] != 0xF1 {
		t.Fatalf("the MTI of an EBCDIC file starts with %x", ebcdic[4])
	}
	opts.Encoding = EncodingCP037
	if res := readAll(t, ebcdic, opts); !res.ok() {
		t.Errorf("cp500 data read as cp037: %v %v", res.errs, res.final)
	}
}

func TestOptions(t *testing.T) {
	for _, o := range []Options{{}, {Hasher: testHasher, Blocking: "rdw"}, {Hasher: testHasher, Encoding: "utf8"}} {
		if _, err := NewReader(bytes.NewReader(nil), o); !errors.Is(err, ErrOptions) {
			t.Errorf("%+v: %v", o, err)
		}
	}
	data := writeFile(t, true, EncodingCP500, goodFile()...)
	if res := readAll(t, data, Options{Hasher: testHasher, Blocking: Unblocked}); res.ok() {
		t.Error("a blocked file read as unblocked")
	}
	if res := readAll(t, data, Options{Hasher: testHasher, Blocking: Blocked}); !res.ok() {
		t.Errorf("a blocked file read as blocked: %v %v", res.errs, res.final)
	}
}

// TestOneErrorPerBadMessage: a message whose PDSs do not split is one
// error; it still counts for its trailer, so the trailer is not a second.
func TestOneErrorPerBadMessage(t *testing.T) {
	msgs := goodFile()
	bad := presentment(testARN, "00000002", "000000019722")
	bad.PDS, bad.Fields[48] = nil, "01x5003abc"
	msgs[1] = bad
	for _, blocking := range []string{"", Blocked} {
		res := readAll(t, writeFile(t, true, EncodingCP500, msgs...), Options{Hasher: testHasher, Blocking: blocking})
		if len(res.errs) != 1 || !errors.Is(res.errs[0], ErrPDS) {
			t.Errorf("blocking %q: errors %v", blocking, res.errs)
		}
	}
}

func TestLifecycleKeyFindsThePresentmentOfEveryStep(t *testing.T) {
	const arn = "05454546304001603000012"
	want := "ipm:" + arn + ":1240:200"
	for _, s := range []string{arn, want, "ipm:" + arn + ":1442:450", "ipm:" + arn + ":1240:205", "ipm:" + arn + ":1442:454"} {
		if got, ok := LifecycleKey(s); !ok || got != want {
			t.Errorf("LifecycleKey(%q) = %q, %v; want %q", s, got, ok, want)
		}
	}
	for _, s := range []string{"05454546304001603000013", "0545454630400160300001", "ipm:024680:1740:700:02468026110300000001",
		"ach:1234567890:2026-11-29:091000010000001", "ipm:" + arn + ":1644:697"} {
		if got, ok := LifecycleKey(s); ok {
			t.Errorf("LifecycleKey(%q) = %q, want none", s, got)
		}
	}
}
