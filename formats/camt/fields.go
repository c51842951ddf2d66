package camt

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/formats/internal/statement"
	"github.com/clearing-dev/clearing/internal/money"
)

// currency looks up an ISO 4217 code for an amount. XXX (no currency) and
// XTS (testing) are refused: neither can be reconciled against anything.
func currency(code string) (money.Currency, error) {
	code = strings.TrimSpace(code)
	if code == "" {
		return money.Currency{}, fmt.Errorf("%w: amount without a currency (Ccy)", ErrAmount)
	}
	if code == "XXX" || code == "XTS" {
		return money.Currency{}, fmt.Errorf("%w: currency %s is not a currency of account", ErrAmount, code)
	}
	c, err := money.LookupCurrency(code)
	if err != nil || len(code) != 3 || code != strings.ToUpper(code) {
		return money.Currency{}, fmt.Errorf("%w: unknown currency %q", ErrAmount, code)
	}
	return c, nil
}

// amount parses an ActiveOrHistoricCurrencyAndAmount: an unsigned decimal
// with a point and at most the currency's exponent of decimals. It never
// rounds.
func amount(a xAmt) (int64, money.Currency, error) {
	c, err := currency(a.Ccy)
	if err != nil {
		return 0, c, err
	}
	s := strings.TrimSpace(a.Value)
	if s == "" {
		return 0, c, fmt.Errorf("%w: empty amount", ErrAmount)
	}
	if s[0] == '-' || s[0] == '+' {
		return 0, c, fmt.Errorf("%w: amount %q has a sign; the direction is CdtDbtInd", ErrAmount, s)
	}
	v, err := money.ParseMajor(s, c)
	if err != nil {
		if errors.Is(err, money.ErrPrecision) {
			return 0, c, fmt.Errorf("%w: %q has more decimal places than %s allows (%d)", ErrAmount, s, c.Code, c.Exponent)
		}
		return 0, c, fmt.Errorf("%w: %q is not a decimal amount", ErrAmount, s)
	}
	if err := formats.CheckAmount(v); err != nil {
		return 0, c, err
	}
	return v, c, nil
}

// date reads a DateAndDateTimeChoice: Dt (YYYY-MM-DD, perhaps with a zone
// offset) or DtTm, of which only the calendar date as written counts. An
// absent choice is the zero time; an impossible date is an error.
func date(d xDate) (time.Time, error) {
	s := strings.TrimSpace(d.Dt)
	if s == "" {
		s = strings.TrimSpace(d.DtTm)
	}
	if s == "" {
		return time.Time{}, nil
	}
	if len(s) < 10 {
		return time.Time{}, fmt.Errorf("%w: date %q is not YYYY-MM-DD", ErrField, s)
	}
	rest := s[10:]
	if rest != "" && rest[0] != 'T' && rest[0] != 'Z' && rest[0] != '+' && rest[0] != '-' {
		return time.Time{}, fmt.Errorf("%w: date %q is not YYYY-MM-DD", ErrField, s)
	}
	t, err := time.Parse(time.DateOnly, s[:10])
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: date %q is not a calendar date", ErrField, s)
	}
	return t, nil
}

// direction reads a CdtDbtInd.
func direction(s string) (formats.Direction, bool) {
	switch strings.TrimSpace(s) {
	case "CRDT":
		return formats.Credit, true
	case "DBIT":
		return formats.Debit, true
	}
	return "", false
}

// placeholders are what banks write where they have no reference.
var placeholders = map[string]bool{"NONREF": true, "NOTPROVIDED": true, "NONE": true, "NOREF": true, "N/A": true}

// ref cleans a reference for use as a matching reference: trimmed, not a
// placeholder, not longer than a reference can be, and not an IBAN (valid
// check digits), which is an account number and may only be kept hashed.
func ref(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || placeholders[strings.ToUpper(s)] || len(s) > maxRefBytes || validIBAN(s) {
		return ""
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return ""
		}
	}
	return s
}

// looksLikeIBAN reports whether s has the shape of an IBAN: a country
// code, two check digits and 11 to 30 letters and digits.
func looksLikeIBAN(s string) bool {
	s = strings.ReplaceAll(s, " ", "")
	if len(s) < 15 || len(s) > 34 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case i < 2 && (c < 'A' || c > 'Z'):
			return false
		case i >= 2 && i < 4 && (c < '0' || c > '9'):
			return false
		case i >= 4 && !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z'):
			return false
		}
	}
	return true
}

// validIBAN reports whether s (spaces ignored) is an IBAN: its shape and
// its mod-97 check digits, which a reference of that shape passes only by
// chance (ING's end-to-end ids look like IBANs).
func validIBAN(s string) bool {
	s = strings.ReplaceAll(s, " ", "")
	if !looksLikeIBAN(s) {
		return false
	}
	return statement.IBANChecksum(s)
}

// bankRef is an entry's own reference for its key: AcctSvcrRef, else
// NtryRef, placeholders excluded, and IBANs too (PostFinance writes the
// account's IBAN into NtryRef), which a key stored in clear may not hold.
func bankRef(e *xEntry) string {
	for _, s := range []string{e.AcctSvcrRef, e.NtryRef} {
		s = strings.TrimSpace(s)
		if s != "" && !placeholders[strings.ToUpper(s)] && len(s) <= maxRefBytes && !validIBAN(s) {
			return s
		}
	}
	return ""
}

// matchRefs returns a detail's matching references in order of preference:
// EndToEndId, the structured remittance (creditor) reference, InstrId,
// TxId, PmtInfId.
func matchRefs(tx *xTx, pmtInfID string) []string {
	var out []string
	add := func(s string) {
		if s = ref(s); s == "" {
			return
		}
		for _, o := range out {
			if o == s {
				return
			}
		}
		out = append(out, s)
	}
	if tx != nil {
		add(tx.Refs.EndToEndId)
		for _, s := range tx.RmtInf.Strd {
			add(s.CdtrRefInf.Ref)
		}
		add(tx.Refs.InstrId)
		add(tx.Refs.TxId)
		add(tx.Refs.PmtInfId)
	}
	add(pmtInfID)
	return out
}

func two(refs []string, fallback string) (string, string) {
	switch len(refs) {
	case 0:
		return ref(fallback), ""
	case 1:
		if fb := ref(fallback); fb != refs[0] {
			return refs[0], fb
		}
		return refs[0], ""
	}
	return refs[0], refs[1]
}
