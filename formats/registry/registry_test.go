package registry

import (
	"bytes"
	"errors"
	"testing"

	"github.com/clearing-dev/clearing/formats/camt"
	"github.com/clearing-dev/clearing/formats/ipm"
	"github.com/clearing-dev/clearing/formats/mt940"
)

// every format detection tells apart, so that each case is checked against
// all the others.
var detectable = []string{ACH, BAI2, IPM, CAMT, MT940}

// peeker is an Input over data whose Peek returns what there is, as
// infile.File's does at the end of a short file.
type peeker struct{ *bytes.Reader }

func (p peeker) Peek(n int) ([]byte, error) {
	b := make([]byte, min(n, p.Len()))
	k, _ := p.ReadAt(b, p.Size()-int64(p.Len()))
	return b[:k], nil
}

func input(data []byte) Input { return peeker{bytes.NewReader(data)} }

func ipmFile(t *testing.T, blocked bool, encoding string) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := ipm.Generate(&b, ipm.GenerateOptions{Seed: 1, Presentments: 3, Blocked: blocked, Encoding: encoding}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func camtFile(t *testing.T, message, version string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := camt.Generate(&b, camt.RandomStatements(camt.RandomOptions{Seed: 1, Entries: 2, Currency: "EUR"}),
		camt.GenerateOptions{Message: message, Version: version}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func mt940File(t *testing.T, envelope, crlf bool) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := mt940.Generate(&b, mt940.RandomStatements(mt940.RandomOptions{Seed: 1, Lines: 2, Currency: "EUR"}),
		mt940.GenerateOptions{Envelope: envelope, CRLF: crlf}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestDetectTellsEachFormatFromItsFirstBytes(t *testing.T) {
	ach := []byte("101 091000019 0910000192611290000A094101DEST BANK              ORIGIN CO              \n")
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"ach", ach, ACH},
		{"bai2", []byte("01,BANKID,CUSTID,261129,0000,1,,,2/\n"), BAI2},
		{"ipm blocked ebcdic", ipmFile(t, true, ipm.EncodingCP500), IPM},
		{"ipm unblocked ebcdic", ipmFile(t, false, ipm.EncodingCP037), IPM},
		{"ipm unblocked ascii", ipmFile(t, false, ipm.EncodingLatin1), IPM},
		{"camt.053.001.08", camtFile(t, "053", "001.08"), CAMT},
		{"camt.052.001.02", camtFile(t, "052", "001.02"), CAMT},
		{"camt.054.001.04", camtFile(t, "054", "001.04"), CAMT},
		{"camt with a byte order mark", append([]byte("\xef\xbb\xbf"), camtFile(t, "053", "001.02")...), CAMT},
		{"mt940", mt940File(t, false, false), MT940},
		{"mt940 in its envelope, CRLF", mt940File(t, true, true), MT940},
		{"mt940 after a bank's header line", append([]byte("BANK EXPORT 2026-11-29\r\n"), mt940File(t, false, true)...), MT940},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := detect(input(c.data), c.name, Options{Allowed: detectable})
			if err != nil || got != c.want {
				t.Fatalf("detected %q (%v), want %q", got, err, c.want)
			}
		})
	}
}

func TestDetectRefusesWhatItCannotTell(t *testing.T) {
	for name, data := range map[string][]byte{
		"csv":              []byte("id,amount,currency\n1,100,USD\n"),
		"xml, not camt":    []byte(`<?xml version="1.0"?><Document xmlns="urn:iso:std:iso:20022:tech:xsd:pain.001.001.09"/>`),
		"binary garbage":   {0x00, 0x00, 0x00, 0x05, 0xde, 0xad, 0xbe, 0xef, 0x00},
		"a length, no mti": {0x00, 0x00, 0x01, 0x00, 0xf1, 0xf2, 0xf3, 0xf4, 0x00},
		"a :20: tag alone": []byte(":20:REF\n:28C:1/1\n"),
		"empty":            {},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := detect(input(data), name, Options{Allowed: detectable})
			if !errors.Is(err, ErrUnknownFormat) {
				t.Fatalf("detected %q (%v), want ErrUnknownFormat", got, err)
			}
		})
	}
}
