package iso8583

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/clearing-dev/clearing/formats"
)

func reversalOf(orig Txn, mti string, rrn bool, de90 bool) Txn {
	t := orig
	t.MTI = mti
	t.STAN = "000777"
	t.Transmitted = orig.Transmitted.Add(time.Minute)
	if !rrn {
		t.RRN = ""
	}
	if de90 {
		t.Original = &Original{MTI: orig.MTI, STAN: orig.STAN, Transmitted: orig.Transmitted, Acquirer: orig.Acquirer}
	}
	return t
}

func TestMapping(t *testing.T) {
	p := purchase()
	refund := p
	refund.MTI, refund.ProcessingCode = "0220", "200000"
	inquiry := p
	inquiry.ProcessingCode, inquiry.Amount = "310000", 0
	zero := p
	zero.Amount = 0
	auth := p
	auth.MTI = "0100"
	partial := reversalOf(p, "0400", true, false)
	actual := int64(250)
	partial.Actual = &actual
	whole := reversalOf(p, "0400", true, false)
	none := int64(0)
	whole.Actual = &none
	nothing := reversalOf(p, "0400", true, false)
	all := p.Amount
	nothing.Actual = &all
	advice := reversalOf(refund, "0420", true, true)
	bhd := p
	bhd.Currency, bhd.Amount = "048", 1
	noTrack := p.Message()
	noTrack = with(with(noTrack, fieldPAN, "-"), fieldTrack2, testPAN+"=29121010000000000000")

	pKey := "iso8583:00417:633312345678:0200"
	altRef := "0200:00000000417:000123:1129143005"
	rrnLink := &formats.Link{Reference: "633312345678", KeyPrefix: "iso8583:00417:633312345678:02", Suffix: ":reversal"}
	tests := []struct {
		name string
		msg  Message
		want formats.Record
	}{
		{"purchase", p.Message(), formats.Record{Key: pKey, Kind: formats.Clearing, Detail: "0200 financial request, purchase",
			Reference: "633312345678", AltReference: altRef, Amount: 1000, Currency: "USD", Direction: formats.Debit,
			ValueDate: formats.Date(2026, 11, 30)}},
		{"repeat has the key of its original", withMTI(p.Message(), "0201"), formats.Record{Key: pKey, Kind: formats.Clearing,
			Detail: "0201 financial request (repeat), purchase", Reference: "633312345678", AltReference: altRef,
			Amount: 1000, Currency: "USD", Direction: formats.Debit, ValueDate: formats.Date(2026, 11, 30), Repeat: true}},
		{"refund advice credits", refund.Message(), formats.Record{Key: "iso8583:00417:633312345678:0220", Kind: formats.Clearing,
			Detail: "0220 financial advice, refund", Reference: "633312345678", AltReference: "0220:00000000417:000123:1129143005",
			Amount: 1000, Currency: "USD", Direction: formats.Credit, ValueDate: formats.Date(2026, 11, 30)}},
		{"inquiry is a notice", inquiry.Message(), formats.Record{Key: pKey, Kind: formats.Notice, Detail: "0200 financial request, inquiry",
			Reference: "633312345678", Currency: "USD", Direction: formats.Debit, ValueDate: formats.Date(2026, 11, 30)}},
		{"zero amount is a notice", zero.Message(), formats.Record{Key: pKey, Kind: formats.Notice,
			Detail: "0200 financial request, purchase (zero amount)", Reference: "633312345678", Currency: "USD",
			Direction: formats.Debit, ValueDate: formats.Date(2026, 11, 30)}},
		{"authorisation is a notice", auth.Message(), formats.Record{Key: "iso8583:00417:633312345678:0100", Kind: formats.Notice,
			Detail: "0100 authorisation request, purchase", Reference: "633312345678", Amount: 1000, Currency: "USD",
			Direction: formats.Debit, ValueDate: formats.Date(2026, 11, 30)}},
		{"reversal by RRN", reversalOf(p, "0400", true, false).Message(), formats.Record{Key: "iso8583:00417:633312345678:0400",
			Kind: formats.Reversal, Detail: "0400 reversal request, purchase", Reference: "633312345678", Amount: 1000,
			Currency: "USD", Direction: formats.Debit, ValueDate: formats.Date(2026, 11, 30), Link: rrnLink}},
		{"reversal repeat", reversalOf(p, "0401", true, false).Message(), formats.Record{Key: "iso8583:00417:633312345678:0400",
			Kind: formats.Reversal, Detail: "0401 reversal request (repeat), purchase", Reference: "633312345678", Amount: 1000,
			Currency: "USD", Direction: formats.Debit, ValueDate: formats.Date(2026, 11, 30), Link: rrnLink, Repeat: true}},
		{"DE90 narrows the RRN link to its class", advice.Message(), formats.Record{Key: "iso8583:00417:633312345678:0420",
			Kind: formats.Reversal, Detail: "0420 reversal advice, refund", Reference: "633312345678", Amount: 1000,
			Currency: "USD", Direction: formats.Credit, ValueDate: formats.Date(2026, 11, 30),
			Link: &formats.Link{Reference: "633312345678", KeyPrefix: "iso8583:00417:633312345678:0220", Suffix: ":reversal",
				Fallback: "0220:00000000417:000123:1129143005", FallbackPrefix: "iso8583:00417:"}}},
		{"reversal without RRN links through DE90", reversalOf(p, "0420", false, true).Message(), formats.Record{
			Key: "iso8583:00417:-:0420:" + altRef, Kind: formats.Reversal, Detail: "0420 reversal advice, purchase",
			Amount: 1000, Currency: "USD", Direction: formats.Debit, ValueDate: formats.Date(2026, 11, 30),
			Link: &formats.Link{Reference: altRef, ByAlt: true, KeyPrefix: "iso8583:00417:", Suffix: ":reversal"}}},
		{"partial reversal reverses the difference", partial.Message(), formats.Record{Key: "iso8583:00417:633312345678:0400",
			Kind: formats.Reversal, Detail: "0400 reversal request, purchase (partial)", Reference: "633312345678", Amount: 750,
			Currency: "USD", Direction: formats.Debit, ValueDate: formats.Date(2026, 11, 30), Link: rrnLink}},
		{"actual amount zero is a whole reversal", whole.Message(), formats.Record{Key: "iso8583:00417:633312345678:0400",
			Kind: formats.Reversal, Detail: "0400 reversal request, purchase", Reference: "633312345678", Amount: 1000,
			Currency: "USD", Direction: formats.Debit, ValueDate: formats.Date(2026, 11, 30), Link: rrnLink}},
		{"actual amount equal to DE4 reverses nothing", nothing.Message(), formats.Record{Key: "iso8583:00417:633312345678:0400",
			Kind: formats.Notice, Detail: "0400 reversal request, purchase (nothing to reverse)", Reference: "633312345678",
			Currency: "USD", Direction: formats.Debit, ValueDate: formats.Date(2026, 11, 30)}},
		{"reversal of an authorisation is a notice", reversalOf(auth, "0400", true, true).Message(), formats.Record{
			Key: "iso8583:00417:633312345678:0400", Kind: formats.Notice, Detail: "0400 reversal request of an authorisation, purchase",
			Reference: "633312345678", Amount: 1000, Currency: "USD", Direction: formats.Debit, ValueDate: formats.Date(2026, 11, 30)}},
		{"leading zeros of the currency are kept", bhd.Message(), formats.Record{Key: pKey, Kind: formats.Clearing,
			Detail: "0200 financial request, purchase", Reference: "633312345678", AltReference: altRef, Amount: 1,
			Currency: "BHD", Direction: formats.Debit, ValueDate: formats.Date(2026, 11, 30)}},
		{"PAN from track 2", noTrack, formats.Record{Key: pKey, Kind: formats.Clearing, Detail: "0200 financial request, purchase",
			Reference: "633312345678", AltReference: altRef, Amount: 1000, Currency: "USD", Direction: formats.Debit,
			ValueDate: formats.Date(2026, 11, 30)}},
		{"value date from DE13 without DE15", with(p.Message(), fieldSettlementDate, "-"), formats.Record{Key: pKey,
			Kind: formats.Clearing, Detail: "0200 financial request, purchase", Reference: "633312345678", AltReference: altRef,
			Amount: 1000, Currency: "USD", Direction: formats.Debit, ValueDate: formats.Date(2026, 11, 29)}},
		{"value date from DE7 alone", with(with(with(p.Message(), fieldSettlementDate, "-"), fieldLocalDate, "-"), fieldTransmission, "0115101010"),
			formats.Record{Key: pKey, Kind: formats.Clearing, Detail: "0200 financial request, purchase", Reference: "633312345678",
				AltReference: "0200:00000000417:000123:0115101010", Amount: 1000, Currency: "USD", Direction: formats.Debit,
				ValueDate: formats.Date(2026, 1, 15)}},
		{"response is skipped", withMTI(p.Message(), "0210"), formats.Record{Kind: formats.Skip, Detail: "0210 financial response"}},
		{"advice response is skipped", withMTI(p.Message(), "0230"), formats.Record{Kind: formats.Skip, Detail: "0230 financial advice response"}},
		{"reversal response is skipped", withMTI(p.Message(), "0410"), formats.Record{Kind: formats.Skip, Detail: "0410 reversal response"}},
		{"network management is skipped", Message{MTI: "0800", Fields: map[int]string{fieldSTAN: "000001", 70: "301"}},
			formats.Record{Kind: formats.Skip, Detail: "0800 network management request"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := one(t, tt.msg)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			want.Line, want.Offset = 1, 0
			if want.Kind != formats.Skip && (tt.msg.Fields[fieldPAN] != "" || tt.msg.Fields[fieldTrack2] != "") {
				want.Account = testHasher.Account(panScope, testPAN)
			}
			gotLink, wantLink := got.Link, want.Link
			got.Link, want.Link = nil, nil
			if got != want {
				t.Errorf("record\n got %+v\nwant %+v", got, want)
			}
			if (gotLink == nil) != (wantLink == nil) || gotLink != nil && *gotLink != *wantLink {
				t.Errorf("link = %+v, want %+v", gotLink, wantLink)
			}
		})
	}
}

func TestRepeatsAreDuplicates(t *testing.T) {
	p := purchase()
	rev := reversalOf(p, "0400", true, true)
	pairs := []struct {
		name          string
		first, repeat Message
	}{
		{"0201 repeats 0200", p.Message(), withMTI(p.Message(), "0201")},
		{"0401 repeats 0400", rev.Message(), withMTI(rev.Message(), "0401")},
		{"0421 repeats 0420", withMTI(rev.Message(), "0420"), withMTI(rev.Message(), "0421")},
		{"0221 repeats 0220", withMTI(p.Message(), "0220"), withMTI(p.Message(), "0221")},
	}
	for _, tt := range pairs {
		t.Run(tt.name, func(t *testing.T) {
			a, err := one(t, tt.first)
			if err != nil {
				t.Fatal(err)
			}
			b, err := one(t, tt.repeat)
			if err != nil {
				t.Fatal(err)
			}
			if a.Key != b.Key || formats.Digest(&a) != formats.Digest(&b) {
				t.Errorf("repeat: key %q digest %x, original: key %q digest %x", b.Key, formats.Digest(&b), a.Key, formats.Digest(&a))
			}
		})
	}
}

func TestMappingRejects(t *testing.T) {
	p := purchase().Message()
	rev := reversalOf(purchase(), "0400", true, false)
	big := int64(1001)
	rev.Actual = &big
	tests := []struct {
		name, field, want string
		msg               Message
	}{
		{"1993 MTI", "MTI", "only ISO 8583:1987", withMTI(p, "1200")},
		{"reconciliation class", "MTI", "message class 5", withMTI(p, "0500")},
		{"unknown function", "MTI", "function 4", withMTI(p, "0240")},
		{"unknown origin", "MTI", "origin 6", withMTI(p, "0206")},
		{"unknown processing code", "DE3", "transaction type 40", with(p, fieldProcessingCode, "400000")},
		{"non-numeric amount", "DE4", "not 1 to 18 digits", with(p, fieldAmount, "00000000010A")},
		{"signed amount", "DE4", "not 1 to 18 digits", with(p, fieldAmount, "-00000000010")},
		{"unknown currency", "DE49", "not a known ISO 4217", with(p, fieldCurrency, "001")},
		{"no currency involved", "DE49", "XXX", with(p, fieldCurrency, "999")},
		{"alphabetic currency", "DE49", "not three digits", with(p, fieldCurrency, "USD")},
		{"month 13", "DE7", "MMDDhhmmss", with(p, fieldTransmission, "1301101010")},
		{"hour 24", "DE7", "MMDDhhmmss", with(p, fieldTransmission, "1129240000")},
		{"30 February", "DE13", "not a valid MMDD", with(p, fieldLocalDate, "0230")},
		{"bad local time", "DE12", "hhmmss", with(p, fieldLocalTime, "126000")},
		{"bad STAN", "DE11", "six digits", with(p, fieldSTAN, "00012A")},
		{"bad acquirer", "DE32", "1 to 11 digits", with(p, fieldAcquirer, "12AB")},
		{"RRN with a space", "DE37", "12 letters or digits", with(p, fieldRRN, "6333 1234567")},
		{"short PAN", "DE2", "8 to 19 digits", with(p, fieldPAN, "1234567")},
		{"no RRN", "DE37", "no key", with(p, fieldRRN, "-")},
		{"blank RRN", "DE37", "no key", with(p, fieldRRN, "            ")},
		{"no PAN", "DE2", "no cardholder account", with(p, fieldPAN, "-")},
		{"no amount", "DE4", "missing", with(p, fieldAmount, "-")},
		{"no currency", "DE49", "missing", with(p, fieldCurrency, "-")},
		{"no processing code", "DE3", "missing", with(p, fieldProcessingCode, "-")},
		{"no date", "DE7", "no date", with(with(with(p, fieldSettlementDate, "-"), fieldLocalDate, "-"), fieldTransmission, "-")},
		{"reversal without RRN or DE90", "DE37", "cannot be found", withMTI(with(p, fieldRRN, "-"), "0400")},
		{"actual amount above DE4", "DE95", "larger than the amount", rev.Message()},
		{"reversal of a reversal", "DE90", "only financial", with(withMTI(p, "0400"), fieldOriginal, "0400000123112914300500000000417"+"00000000000")},
		{"DE90 not digits", "DE90", "42 digits", with(withMTI(p, "0400"), fieldOriginal, strings.Repeat("A", 42))},
		{"DE90 bad date", "DE90", "MMDDhhmmss", with(withMTI(p, "0400"), fieldOriginal, "0200000123139914300500000000417"+"00000000000")},
		{"bad responses are rejected too", "DE49", "not a known", with(withMTI(p, "0210"), fieldCurrency, "001")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := one(t, tt.msg)
			var pe *formats.ParseError
			if !errors.As(err, &pe) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want a ParseError wrapping ErrInvalid", err)
			}
			if pe.Field != tt.field || pe.Line != 1 || pe.Offset != 0 || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v (field %q), want field %s and %q", err, pe.Field, tt.field, tt.want)
			}
		})
	}
}

func TestProcessingCodes(t *testing.T) {
	tests := []struct {
		code string
		dir  formats.Direction
		kind formats.Kind
	}{
		{"000000", formats.Debit, formats.Clearing},
		{"001000", formats.Debit, formats.Clearing},
		{"010000", formats.Debit, formats.Clearing},
		{"020000", formats.Debit, formats.Clearing},
		{"090000", formats.Debit, formats.Clearing},
		{"200000", formats.Credit, formats.Clearing},
		{"210000", formats.Credit, formats.Clearing},
		{"220000", formats.Credit, formats.Clearing},
		{"300000", formats.Debit, formats.Notice},
		{"380000", formats.Debit, formats.Notice},
		{"030000", "", ""},
		{"110000", "", ""},
		{"400000", "", ""},
		{"500000", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			rec, err := one(t, with(purchase().Message(), fieldProcessingCode, tt.code))
			if tt.kind == "" {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("err = %v, want ErrInvalid", err)
				}
				return
			}
			if err != nil || rec.Direction != tt.dir || rec.Kind != tt.kind {
				t.Errorf("got %s %s, %v; want %s %s", rec.Kind, rec.Direction, err, tt.kind, tt.dir)
			}
		})
	}
}

// TestResponsesSkippedWhateverTheirProcessingCode guards that a response
// with a processing code the reader cannot post (national use) is skipped,
// not refused.
func TestResponsesSkippedWhateverTheirProcessingCode(t *testing.T) {
	for _, mti := range []string{"0210", "0230", "0410", "0430"} {
		rec, err := one(t, with(withMTI(purchase().Message(), mti), fieldProcessingCode, "180000"))
		if err != nil || rec.Kind != formats.Skip {
			t.Errorf("%s with processing code 18: kind %q, err %v; want skipped", mti, rec.Kind, err)
		}
	}
}
