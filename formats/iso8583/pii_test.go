package iso8583

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	moovErrors "github.com/moov-io/iso8583/errors"

	"github.com/clearing-dev/clearing/formats"
)

// panWindows are the 6-digit pieces of testPAN. No output may hold any of
// them: not the PAN, and not enough of it to matter.
func panWindows() []string {
	var w []string
	for i := 0; i+6 <= len(testPAN); i++ {
		w = append(w, testPAN[i:i+6])
	}
	return w
}

func leaks(s string) string {
	for _, w := range panWindows() {
		if strings.Contains(s, w) {
			return w
		}
	}
	return ""
}

// checkNoPAN fails when an error (with everything it wraps) or a record
// field holds a piece of testPAN.
func checkNoPAN(t *testing.T, res result) {
	t.Helper()
	errs := append([]error{res.final}, res.errs...)
	for _, err := range errs {
		var unpack *moovErrors.UnpackError
		if errors.As(err, &unpack) {
			t.Errorf("an error wraps moov's UnpackError, which holds the raw message: %v", err)
		}
		for e := err; e != nil; e = errors.Unwrap(e) {
			if w := leaks(e.Error() + fmt.Sprintf("%+v %#v", e, e)); w != "" {
				t.Errorf("error %q holds %q of the PAN", e, w)
			}
		}
	}
	for _, rec := range res.records {
		rec.ValueDate = rec.ValueDate.UTC()
		if w := leaks(fmt.Sprintf("%+v %+v", rec, rec.Link)); w != "" {
			t.Errorf("record %+v holds %q of the PAN", rec, w)
		}
		if rec.Account.ID != "" && rec.Account.Last4 != testPAN[len(testPAN)-4:] {
			t.Errorf("last4 %q", rec.Account.Last4)
		}
	}
}

func TestPANAppearsNowhere(t *testing.T) {
	p := purchase()
	good := p.Message()
	track := with(good, fieldTrack2, testPAN+"=29121010000000000000")
	rev := reversalOf(p, "0400", true, true).Message()
	packed := write(t, FramingRaw, good)
	misaligned := func(drop int) []byte { // the bitmap no longer announces DE3; every field after DE2 shifts
		b := append([]byte(nil), packed...)
		b[4+0] = "0123456789ABCDEF"[drop]
		return b
	}
	tests := []struct {
		name    string
		framing string
		spec    string
		data    []byte
	}{
		{"valid", FramingRaw, "", packed},
		{"valid with track 2", FramingRaw, "", write(t, FramingRaw, track)},
		{"valid reversal", FramingRaw, "", write(t, FramingRaw, rev)},
		{"PAN with a letter", FramingRaw, "", write(t, FramingRaw, with(good, fieldPAN, testPAN[:10]+"X"+testPAN[11:]))},
		{"PAN too long", FramingRaw, "", []byte(strings.Replace(string(packed), "16"+testPAN, "20"+testPAN+"0000", 1))},
		{"PAN length prefix not digits", FramingRaw, "", []byte(strings.Replace(string(packed), "16"+testPAN, "1X"+testPAN, 1))},
		{"PAN cut short", FramingRaw, "", packed[:30]},
		{"track 2 too long", FramingRaw, "", []byte(strings.Replace(string(write(t, FramingRaw, track)), "37"+testPAN, "99"+testPAN, 1))},
		{"bad track 2 only", FramingRaw, "", write(t, FramingRaw, with(with(good, fieldPAN, "-"), fieldTrack2, "X"+testPAN+"=2912"))},
		{"bitmap misses DE3", FramingRaw, "", misaligned(6)},
		{"bitmap misses DE2", FramingRaw, "", misaligned(3)},
		{"bitmap adds DE1", FramingRaw, "", misaligned(15)},
		{"wrong spec", FramingRaw, SpecName87ASCII, packed},
		{"wrong spec detected", "", SpecName87ASCII, write(t, FramingRDW, good, good)},
		{"wrong framing", FramingASCII4, "", write(t, FramingHex, good)},
		{"wrong framing detected", "", "", append(write(t, FramingRDW, good), packed...)},
		{"hex of garbage", FramingHex, "", []byte(testPAN + testPAN + "\n")},
		{"raw PAN", FramingRaw, "", []byte(testPAN)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := testOptions(tt.framing)
			opts.Spec = tt.spec
			res := readAll(t, tt.data, opts)
			if tt.name != "valid" && !strings.HasPrefix(tt.name, "valid ") && len(res.errs) == 0 && res.final == nil {
				t.Fatalf("no error: the case tests nothing")
			}
			checkNoPAN(t, res)
		})
	}
}

func TestGeneratedFileLeaksNoPAN(t *testing.T) {
	data, _ := generated(t, FramingHex, 77, 400)
	res := readAll(t, data, testOptions(""))
	for _, rec := range res.records {
		if strings.Contains(rec.Key+rec.Detail+rec.Reference+rec.AltReference+rec.Account.ID, "400000") {
			t.Fatalf("record %+v holds the generator's BIN", rec)
		}
	}
}

func TestSafeText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"expected len 30, got 21", "expected len 30, got 21"},
		{`parsing "4761739001010119": invalid`, `parsing "************0119": invalid`},
		{"a 1234567 b 12345678", "a 1234567 b ****5678"},
		{"tab\there\x00\xff", "tab?here??"},
		{strings.Repeat("x", 200), strings.Repeat("x", maxErrorText) + "..."},
	}
	for _, tt := range tests {
		if got := safeText(tt.in); got != tt.want {
			t.Errorf("safeText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	card := safeDecodeText(fieldPAN, errors.New(`strconv.Atoi: parsing "42x": invalid syntax`))
	if strings.Contains(card, "42") || !strings.Contains(card, "withheld") {
		t.Errorf("card data field: %q", card)
	}
	if got := safeDecodeText(fieldPAN, errors.New("not enough data to decode. expected len 16, got 9")); !strings.Contains(got, "expected len 16") {
		t.Errorf("card data field, structural message: %q", got)
	}
	if got := safeDecodeText(fieldTrack2, errors.New("value 4000 1")); !strings.Contains(got, "withheld") {
		t.Errorf("card data field, four digits: %q", got)
	}
}

func TestRecordFieldsAreNotPersonal(t *testing.T) {
	rec, err := one(t, purchase().Message())
	if err != nil {
		t.Fatal(err)
	}
	want := testHasher.Account(panScope, testPAN)
	if rec.Account != want || !strings.HasPrefix(rec.Account.ID, "cust:") {
		t.Errorf("account %+v, want %+v", rec.Account, want)
	}
	if _, err := one(t, with(purchase().Message(), fieldPAN, "-")); !errors.Is(err, ErrInvalid) {
		t.Errorf("a posting without a card: %v", err)
	}
	var pe *formats.ParseError
	_, err = one(t, with(purchase().Message(), fieldPAN, "4761739001010119000"))
	if errors.As(err, &pe) {
		t.Errorf("a 19-digit PAN is valid: %v", err)
	}
}
