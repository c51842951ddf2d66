package money

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
)

func TestTotalSumsPastInt64Exactly(t *testing.T) {
	var sum Total
	for range 10_000 {
		sum = sum.Add(TotalOf(1_000_000_000_000_000))
	}
	if got, want := sum.String(), "10000000000000000000"; got != want {
		t.Fatalf("sum = %s, want %s", got, want)
	}
	if _, ok := sum.Int64(); ok {
		t.Fatalf("Int64 of %s reports that it fits", sum)
	}
	usd, jpy := MustCurrency("USD"), MustCurrency("JPY")
	if got, want := FormatTotal(sum, usd), "100000000000000000.00"; got != want {
		t.Errorf("FormatTotal USD = %s, want %s", got, want)
	}
	if got, want := FormatTotal(TotalOf(0).Sub(sum), jpy), "-10000000000000000000"; got != want {
		t.Errorf("FormatTotal JPY = %s, want %s", got, want)
	}
	if got, want := FormatTotalCode(sum.Add(TotalOf(5)), "USD"), "100000000000000000.05 USD"; got != want {
		t.Errorf("FormatTotalCode = %s, want %s", got, want)
	}
	if back := sum.Sub(sum); !back.IsZero() || back != (Total{}) {
		t.Errorf("sum - sum = %s, want the zero Total", back)
	}
}

func TestTotalFormatsLikeInt64WhenItFits(t *testing.T) {
	bhd := MustCurrency("BHD")
	for _, v := range []int64{0, 1, -1, 999, -1000, math.MaxInt64, math.MinInt64} {
		if got, want := FormatTotal(TotalOf(v), bhd), Format(v, bhd); got != want {
			t.Errorf("FormatTotal(%d) = %s, Format = %s", v, got, want)
		}
		if got, want := FormatTotalCode(TotalOf(v), "XXQ"), FormatCode(v, "XXQ"); got != want {
			t.Errorf("FormatTotalCode(%d, unknown) = %s, FormatCode = %s", v, got, want)
		}
	}
	// One past the int64 range takes the big path and must agree with it.
	big := TotalOf(math.MaxInt64).Add(TotalOf(1))
	if got, want := FormatTotal(big, bhd), "9223372036854775.808"; got != want {
		t.Errorf("FormatTotal(MaxInt64+1) = %s, want %s", got, want)
	}
}

func TestTotalScanAndJSON(t *testing.T) {
	var tt Total
	for _, src := range []any{"10000000000000000000", []byte("10000000000000000000")} {
		if err := tt.Scan(src); err != nil || tt.String() != "10000000000000000000" {
			t.Errorf("Scan(%v) = %s, %v", src, tt, err)
		}
	}
	if err := tt.Scan(int64(-7)); err != nil || tt.String() != "-7" {
		t.Errorf("Scan(int64) = %s, %v", tt, err)
	}
	for _, bad := range []any{nil, "1.5", "1e3", "", "-", 1.5} {
		if err := tt.Scan(bad); !errors.Is(err, ErrTotal) {
			t.Errorf("Scan(%#v) error = %v, want ErrTotal", bad, err)
		}
	}
	v := struct {
		A Total `json:"a"`
		B Total `json:"b"`
	}{A: TotalOf(-12), B: TotalOf(math.MaxInt64).Add(TotalOf(math.MaxInt64))}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"a":-12,"b":18446744073709551614}`; got != want {
		t.Fatalf("json = %s, want %s", got, want)
	}
	var back struct {
		A Total `json:"a"`
		B Total `json:"b"`
	}
	if err := json.Unmarshal(b, &back); err != nil || back.A.Cmp(v.A) != 0 || back.B.Cmp(v.B) != 0 {
		t.Fatalf("round trip = %+v, %v", back, err)
	}
}
