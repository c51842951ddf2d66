package ach

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	moov "github.com/moov-io/ach"
)

// setRunes replaces characters of an ASCII line from position from with
// value, character for character, so that a multi-byte character keeps the
// record at 94 characters.
func setRunes(line string, from int, value string) string {
	return line[:from] + value + line[from+utf8.RuneCountInString(value):]
}

// TestErrorsWithholdPersonalData puts personal data with a character that
// the reader refuses (it is not ASCII) into each personal field, and checks
// that the record is refused without the data in any error.
func TestErrorsWithholdPersonalData(t *testing.T) {
	std := lines(testFile(t, testEntries()))
	iat := lines(write(t, func(w io.Writer) error {
		return WriteIAT(w, DefaultHeader(testCreated), slices.Values(testEntries()[:1]))
	}))
	cases := []struct {
		name   string
		lines  []string
		field  string
		secret string
	}{
		{"account number", replaced(std, 3, func(l string) string { return setRunes(l, 12, "4455667788€") }), "DFIAccountNumber", "4455667788"},
		{"identification number", replaced(std, 3, func(l string) string { return setRunes(l, 39, "SSN123456789€") }), "IdentificationNumber", "123456789"},
		{"IAT receiver name", replaced(iat, 4, func(l string) string { return setRunes(l, 46, "JANE€QDOE") }), "Name", "JANE"},
		{"IAT receiver address", replaced(iat, 9, func(l string) string { return setRunes(l, 18, "12 ELM STREET€") }), "ReceiverStreetAddress", "ELM STREET"},
		{"IAT account number", replaced(iat, 3, func(l string) string { return setRunes(l, 39, "4455667788€") }), "DFIAccountNumber", "4455667788"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := readAll(t, join(tc.lines), Options{})
			found := false
			for _, pe := range res.errs {
				if strings.Contains(pe.Error(), tc.secret) {
					t.Errorf("error shows personal data: %v", pe)
				}
				found = found || pe.Field == tc.field || errors.Is(pe, ErrNotText)
			}
			if !found {
				t.Fatalf("no error for field %s: %v", tc.field, res.errs)
			}
		})
	}
}

// TestDescribe checks how moov-io/ach errors are rendered: shown, masked or
// withheld by field, through a BatchError too.
func TestDescribe(t *testing.T) {
	inner := &moov.FieldError{FieldName: "IndividualName", Value: "JANE DOE", Err: fmt.Errorf("%w: ¿", moov.ErrNonAlphanumeric)}
	cases := []struct {
		name      string
		err       error
		field     string
		want      string
		forbidden string
	}{
		{"shown", &moov.FieldError{FieldName: "TransactionCode", Value: "90", Err: moov.ErrTransactionCode}, "TransactionCode", "TransactionCode 90 is an invalid Transaction Code", ""},
		{"masked", &moov.FieldError{FieldName: "DFIAccountNumber", Value: "123456789", Err: moov.ErrNonAlphanumeric}, "DFIAccountNumber", "*****6789", "12345"},
		{"withheld", inner, "IndividualName", "IndividualName has non alphanumeric characters", "JANE"},
		{"inside a batch error", &moov.BatchError{BatchNumber: 1, FieldName: "FieldError", Err: inner}, "IndividualName", "IndividualName has non alphanumeric", "JANE"},
		{"batch error value withheld", &moov.BatchError{FieldName: "CheckSerialNumber", FieldValue: "CHK 0001 JANE", Err: moov.ErrBatchCheckSerialNumber}, "CheckSerialNumber", "CheckSerialNumber this batch type requires", "JANE"},
		{"plain error", fmt.Errorf("wrapped: %w", errors.New("root cause")), "", "root cause", "wrapped"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			field, msg := describe(tc.err)
			if field != tc.field || !strings.Contains(msg, tc.want) || (tc.forbidden != "" && strings.Contains(msg, tc.forbidden)) {
				t.Fatalf("describe = %q, %q; want field %q, message with %q and without %q", field, msg, tc.field, tc.want, tc.forbidden)
			}
		})
	}
	if got := scrub("value JANE DOE and 4455667788", "JANE DOE", "4455667788", "AL"); strings.Contains(got, "JANE") || strings.Contains(got, "4455") {
		t.Fatalf("scrub left data: %q", got)
	}
}
