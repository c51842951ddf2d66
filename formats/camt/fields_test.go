package camt

import (
	"errors"
	"fmt"
	"testing"

	"github.com/clearing-dev/clearing/formats"
)

// TestNamespaces: every camt.052, .053 and .054 version from 001.01 to
// 001.13 is read; other versions and messages are refused.
func TestNamespaces(t *testing.T) {
	for _, kind := range []string{"052", "053", "054"} {
		for v := 1; v <= 13; v++ {
			ns := fmt.Sprintf("%scamt.%s.001.%02d", nsPrefix, kind, v)
			if m, _, err := parseNamespace(ns); err != nil || m.kind != kind {
				t.Errorf("%s: %+v, %v", ns, m, err)
			}
		}
	}
	for ns, notCamt := range map[string]bool{
		nsPrefix + "camt.053.001.14": false, nsPrefix + "camt.053.001.00": false, nsPrefix + "camt.056.001.01": false,
		nsPrefix + "camt.053.002.02": false, nsPrefix + "pain.001.001.03": true, "": true, "urn:example": true,
	} {
		_, nc, err := parseNamespace(ns)
		if !errors.Is(err, ErrNamespace) || nc != notCamt {
			t.Errorf("%q: notCamt %v, %v", ns, nc, err)
		}
	}
}

func TestLineTypeTable(t *testing.T) {
	code := func(d, f, s, p string) *xBkTxCd {
		var c xBkTxCd
		c.Domn.Cd, c.Domn.Fmly.Cd, c.Domn.Fmly.SubFmlyCd, c.Prtry.Cd = d, f, s, p
		return &c
	}
	over := map[string]formats.LineType{"prtry:EI": formats.Fee, "PMNT/RCDT": formats.SettlementTotal}
	for _, c := range []struct {
		code     *xBkTxCd
		reversal bool
		want     formats.LineType
	}{
		{code("PMNT", "RCDT", "ESCT", ""), false, formats.SettlementTotal},
		{code("PMNT", "ICDT", "ESCT", ""), false, formats.Payment},
		{code("PMNT", "ICDT", "ESCT", ""), true, formats.ReturnLine},
		{code("PMNT", "RDDT", "UPDD", ""), false, formats.ReturnLine},
		{code("ACMT", "MDOP", "FEES", ""), false, formats.Fee},
		{code("PMNT", "CHRG", "OTHR", ""), false, formats.Fee},
		{code("", "", "", "EI"), false, formats.Fee},
		{code("", "", "", "NTRF"), false, formats.Payment},
		{code("", "", "", "CHRG"), false, formats.Payment},
	} {
		if got := lineType(c.code, c.reversal, over); got != c.want {
			t.Errorf("lineType(%+v, %v) = %s, want %s", *c.code, c.reversal, got, c.want)
		}
	}
}

func TestAmounts(t *testing.T) {
	for _, c := range []struct {
		v, ccy string
		want   int64
		ok     bool
	}{
		{"905.3", "CHF", 90530, true}, {"1.500", "EUR", 150, true}, {"1000", "JPY", 1000, true}, {"1.234", "BHD", 1234, true},
		{"1.001", "EUR", 0, false}, {"1.5", "JPY", 0, false}, {"1", "XXX", 0, false}, {"1", "", 0, false}, {"1", "eur", 0, false},
		{"-1", "EUR", 0, false}, {"1e3", "EUR", 0, false}, {"", "EUR", 0, false}, {"10000000000000.01", "USD", 0, false},
	} {
		got, _, err := amount(xAmt{Value: c.v, Ccy: c.ccy})
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("amount(%q %s) = %d, %v", c.v, c.ccy, got, err)
		}
	}
}
