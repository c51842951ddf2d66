package mt940

import (
	"testing"

	"github.com/clearing-dev/clearing/formats/internal/statement"
)

func TestParseInfo(t *testing.T) {
	cases := []struct {
		in   string
		want info
	}{
		{"/EREF/EV12341REP1231456T1234//CNTP/NL32INGB0000012345/INGBNL2A/ING BANK NV///REMI/USTD//EV10001/", info{eref: "EV12341REP1231456T1234"}},
		{"/EREF/02-04-2013 22:56 1120000153447185/BENM//NAME/Nespresso/REMI/674725433", info{eref: "02-04-2013 22:56 1120000153447185"}},
		{"/PREF/M000000003333333//REMI/USTD//TOTAAL 1 VZ/", info{kref: "M000000003333333"}},
		{"/EREF/15814016000676480//CNTP/NL32INGB0000012345/INGBNL2A/J.Janssen///REMI/STRD/CUR/9001123412341234/", info{eref: "15814016000676480", remi: "9001123412341234"}},
		{"166?00UEBERWEISUNG?10931?20EREF+E2E-77 SVWZ+einfach so?21 fuer euch?30HEISDE66?31DE40500105174675974588?32Olivia Dorn", info{eref: "E2E-77", gvc: "166"}},
		{"105?00BASISLASTSCHRIFT?20EREF+A1?21KREF+K2?22MREF+M3", info{eref: "A1", kref: "K2", gvc: "105"}},
		{"Betaling sieraden", info{}},
		{"", info{}},
	}
	for _, c := range cases {
		if got := parseInfo(c.in); got != c.want {
			t.Errorf("parseInfo(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

func TestReferencesDropAccountNumbersAndPlaceholders(t *testing.T) {
	for in, want := range map[string]string{
		"NL91ABNA0417164300": "", "NL47INGB9999999999": "NL47INGB9999999999", "EV12341REP1231456T1234": "EV12341REP1231456T1234", "NONREF": "", "EREF": "", " INV-1 ": "INV-1", "1234": "1234",
		"GB29 NWBK 6016 1331 9268 19": "",
	} {
		if got := ref(in); got != want {
			t.Errorf("ref(%q) = %q, want %q", in, got, want)
		}
	}
	if !validIBAN("GB29NWBK60161331926819") || validIBAN("GB28NWBK60161331926819") {
		t.Error("IBAN check digits")
	}
	if got := statement.KeySegment("#a:b c%~"); got != "%23a%3Ab%20c%25%7E" {
		t.Errorf("keySegment = %q", got)
	}
}
