package pii

import (
	"strings"
	"testing"
)

func TestAccountHidesTheNumber(t *testing.T) {
	h := New("k1")
	a := h.Account("23138010", " 12345678901 ")
	if strings.Contains(a.ID, "12345678901") || a.Last4 != "8901" {
		t.Fatalf("Account = %+v", a)
	}
	if b := h.Account("23138010", "12345678901"); b != a {
		t.Errorf("surrounding spaces changed the hash: %+v vs %+v", a, b)
	}
	if b := h.Account("99999999", "12345678901"); b.ID == a.ID {
		t.Error("the same number under another scope must hash differently")
	}
	if b := New("k2").Account("23138010", "12345678901"); b.ID == a.ID {
		t.Error("another key must hash differently")
	}
	if len(a.ID) != len("cust:")+32 {
		t.Errorf("ID length %d", len(a.ID))
	}
}

func TestMask(t *testing.T) {
	for in, want := range map[string]string{"4242424242424242": "************4242", "123": "***", "": ""} {
		if got := Mask(in); got != want {
			t.Errorf("Mask(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAccountIsStableAcrossReuseAndGoroutines(t *testing.T) {
	h := New("k")
	want := h.Account("s", "123456789")
	done := make(chan Account, 8)
	for range 8 {
		go func() {
			var a Account
			for range 100 {
				a = h.Account("s", "123456789")
				h.Account("other", "987654321")
			}
			done <- a
		}()
	}
	for range 8 {
		if got := <-done; got != want {
			t.Fatalf("concurrent Account = %+v, want %+v", got, want)
		}
	}
}

func BenchmarkAccount(b *testing.B) {
	h := New("k")
	for b.Loop() {
		h.Account("011000015", "12345678901")
	}
}
