// Package registry is the switch from a format's name to its reader: Open
// builds the reader for the named format, or detects the format from the
// file's first bytes when none is named, and refuses formats the caller does
// not allow. Nothing registers itself here; a new format is a new case in
// Open (and in detect when its first bytes tell it apart). Ingest and
// statement import both open files through it, so the two sides of a
// reconciliation are parsed by the same code. The Record contract that every
// reader must keep is checked by formats.Check, next to Record.
package registry

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/formats/ach"
	"github.com/clearing-dev/clearing/formats/bai2"
	"github.com/clearing-dev/clearing/formats/camt"
	"github.com/clearing-dev/clearing/formats/csv"
	"github.com/clearing-dev/clearing/formats/ipm"
	"github.com/clearing-dev/clearing/formats/iso8583"
	"github.com/clearing-dev/clearing/formats/mt940"
	"github.com/clearing-dev/clearing/internal/pii"
)

// ErrUnknownFormat means the format could not be told from the file and was
// not named, or was named but is not one this command reads.
var ErrUnknownFormat = errors.New("registry: unknown format")

// The format names.
const (
	ACH     = "ach"
	ISO8583 = "iso8583"
	IPM     = "ipm"
	CSV     = "csv"
	BAI2    = "bai2"
	CAMT    = "camt"
	MT940   = "mt940"
)

// Input is a file being read: its bytes, and a look at the first of them.
type Input interface {
	io.Reader
	Peek(n int) ([]byte, error)
}

// Options say how to read a file.
type Options struct {
	// Format is one of Allowed; empty detects it.
	Format string
	// Allowed lists the formats the caller accepts.
	Allowed []string
	Hasher  pii.Hasher
	// ISO 8583: the framing (empty detects it) and the spec (empty takes
	// the default).
	ISOFraming, ISOSpec string
	// IPM: the blocking and the code page (empty detects each).
	IPMBlocking, IPMEncoding string
	// CSV: the mapping file or preset, and the file id for line keys (empty
	// takes the file's base name).
	CSVMap, FileID string
	// Statement says the file is read as the other side's statement, which
	// changes what some formats yield: IPM's settlement positions become
	// lines.
	Statement bool
	// ACHLoosen and BAI2Loosen name the money checks a known source needs
	// relaxed; the zero values relax nothing. Each one given is recorded on
	// the run as a warning "loosened: ...".
	ACHLoosen  ach.Loosen
	BAI2Loosen bai2.Loosen
	// Open, when set, replaces the format's reader. Tests use it to feed
	// records that no file format can express.
	Open func(r io.Reader) (formats.Reader, error)
}

// Opened is a reader and what opening it settled.
type Opened struct {
	Reader formats.Reader
	Format string
	// Source is the format's default source: "ach", "iso8583", "bai2", or
	// the CSV mapping's source.
	Source string
	// PositionalKeys says the keys come from the file's name and line
	// numbers (a CSV mapping without key columns), so that a record's key
	// changes when an earlier line is added or removed.
	PositionalKeys bool
	// Warnings, once the reader is done, lists what the file breaks that
	// no key, amount or date depends on (DESIGN principle 10), one
	// sentence each; nil for a format that never warns.
	Warnings func() []string
	// Skipped, once the reader is done, counts the entries it read and
	// left out because they are no statement line (camt entries that are
	// pending or information only); nil for a format that skips none.
	Skipped func() int64
	// Balances, once the reader is done, lists each statement's balance
	// check, per currency, for the statements that state an opening and a
	// closing balance; nil for a format without balances.
	Balances func() []formats.StatementBalance
}

// Open builds the reader for the file at path.
func Open(in Input, path string, o Options) (Opened, error) {
	if o.Open != nil {
		r, err := o.Open(in)
		return Opened{Reader: r, Format: o.Format, Source: o.Format}, err
	}
	format := o.Format
	if format == "" {
		f, err := detect(in, path, o)
		if err != nil {
			return Opened{}, err
		}
		format = f
	}
	allowed := false
	for _, a := range o.Allowed {
		allowed = allowed || a == format
	}
	if !allowed {
		return Opened{}, fmt.Errorf("%w %q here: use --format %s", ErrUnknownFormat, format, strings.Join(o.Allowed, "|"))
	}
	switch format {
	case ACH:
		r := ach.NewReader(in, ach.Options{Hasher: o.Hasher, Loosen: o.ACHLoosen})
		return Opened{Reader: r, Format: ACH, Source: ACH, Warnings: loosened(achLoosened(o.ACHLoosen), r.Warnings)}, nil
	case CSV:
		return openCSV(in, path, o)
	case BAI2:
		r := bai2.NewReader(in, bai2.Options{Hasher: o.Hasher, Loosen: o.BAI2Loosen})
		return Opened{Reader: r, Format: BAI2, Source: BAI2, Warnings: loosened(bai2Loosened(o.BAI2Loosen), r.Warnings)}, nil
	case ISO8583:
		r, err := iso8583.NewReader(in, iso8583.Options{Framing: o.ISOFraming, Spec: o.ISOSpec, Hasher: o.Hasher})
		if err != nil {
			return Opened{}, err
		}
		return Opened{Reader: r, Format: ISO8583, Source: ISO8583}, nil
	case IPM:
		r, err := ipm.NewReader(in, ipm.Options{Blocking: o.IPMBlocking, Encoding: o.IPMEncoding, Hasher: o.Hasher, Statement: o.Statement})
		if err != nil {
			return Opened{}, err
		}
		return Opened{Reader: r, Format: IPM, Source: IPM, Warnings: r.Warnings}, nil
	case CAMT:
		var bs []formats.StatementBalance
		r := camt.NewReader(in, camt.Options{Hasher: o.Hasher, OnStatement: func(s camt.Statement) { bs = append(bs, s.Checks(o.Hasher)...) }})
		return Opened{Reader: r, Format: CAMT, Source: CAMT, Warnings: func() []string { return texts(r.Warnings()) },
			Skipped: r.Skipped, Balances: func() []formats.StatementBalance { return bs }}, nil
	case MT940:
		var bs []formats.StatementBalance
		r := mt940.NewReader(in, mt940.Options{Hasher: o.Hasher, OnStatement: func(s mt940.Statement) {
			if b, ok := s.Check(); ok {
				bs = append(bs, b)
			}
		}})
		return Opened{Reader: r, Format: MT940, Source: MT940, Warnings: func() []string { return texts(r.Warnings()) },
			Balances: func() []formats.StatementBalance { return bs }}, nil
	}
	return Opened{}, fmt.Errorf("%w %q", ErrUnknownFormat, format)
}

func openCSV(in Input, path string, o Options) (Opened, error) {
	if o.CSVMap == "" {
		return Opened{}, fmt.Errorf("csv needs a column mapping: --map FILE or --map preset:NAME (presets: %s)",
			strings.Join(csv.Presets(), ", "))
	}
	m, err := csv.LoadMapping(o.CSVMap)
	if err != nil {
		return Opened{}, err
	}
	fileID := o.FileID
	if fileID == "" {
		fileID = filepath.Base(path)
	}
	r, err := csv.NewReader(in, m, csv.Options{FileID: fileID, Hasher: o.Hasher})
	return Opened{Reader: r, Format: CSV, Source: m.Source, PositionalKeys: len(m.Key) == 0}, err
}

// texts renders a statement reader's warnings as the run stores them.
func texts[W fmt.Stringer](ws []W) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.String()
	}
	return out
}

// loosened puts a "loosened: ..." line for each relaxed check before the
// reader's warnings, so that the run shows what was not checked.
func loosened[W fmt.Stringer](names []string, ws func() []W) func() []string {
	return func() []string {
		out := make([]string, 0, len(names))
		for _, n := range names {
			out = append(out, "loosened: "+n)
		}
		return append(out, texts(ws())...)
	}
}

func achLoosened(l ach.Loosen) []string {
	var out []string
	if l.ForwardTracePrefix {
		out = append(out, "ach trace-prefix (forward entries' trace numbers need not start with the ODFI routing)")
	}
	if l.RDFICheckDigit {
		out = append(out, "ach rdfi-check-digit (entries' RDFI check digits are not verified)")
	}
	return out
}

func bai2Loosened(l bai2.Loosen) []string {
	var out []string
	if l.RecordCounts {
		out = append(out, "bai2 record-counts (the record counts of 49, 98 and 99 trailers are not verified)")
	}
	return out
}

// sniffBytes is how much of a file detection looks at: enough for an XML
// prolog and the root element with its namespaces, or a bank's header
// lines before the first MT940 tag.
const sniffBytes = 4096

// detect tells the format from the first bytes of the file: an ACH file
// starts with a 94-character file header record "101", a BAI2 file with an
// "01," file header, an IPM file with a VBS record holding an IPM MTI, a
// camt file is XML in a camt.05x namespace, and an MT940 file has the tags
// of one. CSV needs its mapping, which --map gives; anything else must be
// named.
func detect(in Input, path string, o Options) (string, error) {
	if o.CSVMap != "" {
		return CSV, nil
	}
	head, err := in.Peek(sniffBytes)
	if err != nil {
		return "", err
	}
	n, line := firstLine(head)
	switch {
	case isACHHeader(line):
		return ACH, nil
	case bytes.HasPrefix(line, []byte("01,")):
		return BAI2, nil
	case isACHRecord(line):
		// A batch or a file control without the file header before it: a
		// fragment of an ACH file, or an operator's report in its shape.
		return "", fmt.Errorf("%w: %s line %d: found a NACHA record of type %q where an ACH file starts with its file header (type 1)",
			ErrUnknownFormat, path, n, line[:1])
	case isIPM(head):
		return IPM, nil
	case isCAMT(head):
		return CAMT, nil
	case isMT940(head):
		return MT940, nil
	}
	return "", fmt.Errorf("%w: %s is not a file whose format can be told from its first bytes (NACHA ACH, BAI2, IPM, camt, MT940): line %d begins %s; name its format with --format %s",
		ErrUnknownFormat, path, n, shown(line), strings.Join(o.Allowed, "|"))
}

// firstLine returns the number and text of the first line of head that is
// not blank, after a UTF-8 byte order mark, without its line break and
// trailing spaces.
func firstLine(head []byte) (int, []byte) {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	n := 1
	for {
		line, rest, found := bytes.Cut(head, []byte("\n"))
		line = bytes.TrimRight(line, " \t\r")
		if len(line) > 0 || !found {
			return n, line
		}
		head, n = rest, n+1
	}
}

// isACHHeader reports whether line starts with a NACHA file header: record
// type 1, a priority code of digits or blanks (banks send 00 and blank as
// well as 01), an immediate destination of digits and blanks, and a
// printable immediate origin.
// The rest of the record is not looked at: a header whose trailing spaces
// were trimmed, or whose creation date is odd, is still one, and the reader
// says what is wrong with it.
func isACHHeader(line []byte) bool {
	if len(line) < 23 || line[0] != '1' {
		return false
	}
	digits := 0
	for i, b := range line[1:23] {
		switch {
		case b >= '0' && b <= '9':
			if i >= 2 && i < 12 {
				digits++
			}
		case b == ' ':
		case i >= 12 && b > ' ' && b <= '~':
			// The immediate origin may be a 10-character identifier.
		default:
			return false
		}
	}
	return digits >= 9
}

// isACHRecord reports whether line looks like another NACHA record (a batch
// header, entry or control): a record type digit and, trimmed or not, the
// length of a record, mostly digits and capitals.
func isACHRecord(line []byte) bool {
	if len(line) < 40 || len(line) > 94 || !bytes.ContainsAny(line[:1], "5689") {
		return false
	}
	for _, b := range line {
		if b < 0x20 || b > 0x7e || (b >= 'a' && b <= 'z') || b == ',' {
			return false
		}
	}
	return true
}

// shown quotes the start of a line for an error message: at most 20
// characters, with any run of digits longer than 8 cut to its last four,
// since an unknown file may hold account numbers.
func shown(line []byte) string {
	if len(line) > 20 {
		line = line[:20]
	}
	var out []byte
	run := 0
	for i := 0; i <= len(line); i++ {
		if i < len(line) && line[i] >= '0' && line[i] <= '9' {
			out = append(out, line[i])
			run++
			continue
		}
		if run > 8 {
			out = append(out[:len(out)-run], "..."...)
			out = append(out, line[i-4:i]...)
		}
		run = 0
		if i < len(line) {
			out = append(out, line[i])
		}
	}
	return strconv.Quote(string(out))
}

// isIPM reports whether head starts with a VBS record (a 4-byte big-endian
// length) whose message begins with an IPM MTI, in EBCDIC or ASCII digits.
// A blocked file starts the same way: its first block begins with the first
// record.
func isIPM(head []byte) bool {
	if len(head) < 8 {
		return false
	}
	n := int(head[0])<<24 | int(head[1])<<16 | int(head[2])<<8 | int(head[3])
	if n < 12 || n > 1<<16 {
		return false
	}
	mti := make([]byte, 4)
	for i, b := range head[4:8] {
		switch {
		case b >= 0xF0 && b <= 0xF9: // EBCDIC digits
			mti[i] = '0' + b - 0xF0
		case b >= '0' && b <= '9':
			mti[i] = b
		default:
			return false
		}
	}
	switch string(mti) {
	case "1240", "1442", "1644", "1740":
		return true
	}
	return false
}

// isCAMT reports whether head is XML (after a byte order mark and blanks)
// naming an ISO 20022 camt.052, camt.053 or camt.054 namespace, or its
// Austrian STUZZA variant ("ISO:camt.053.001.02:APC:STUZZA:payments:003").
func isCAMT(head []byte) bool {
	t := bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	return bytes.HasPrefix(t, []byte("<")) &&
		(bytes.Contains(head, []byte("urn:iso:std:iso:20022:tech:xsd:camt.05")) ||
			bytes.Contains(head, []byte("\"ISO:camt.05")) && bytes.Contains(head, []byte(":APC:STUZZA:")))
}

// isMT940 reports whether head holds a SWIFT block envelope "{1:" or a
// ":20:" tag at the start of a line followed by a ":25:" tag, as an MT940
// or MT942 message does after whatever header lines a bank puts first.
func isMT940(head []byte) bool {
	t := bytes.TrimLeft(head, " \t\r\n\x01\x02\x03")
	if bytes.HasPrefix(t, []byte("{1:")) {
		return true
	}
	i := bytes.Index(head, []byte("\n:20:"))
	if bytes.HasPrefix(t, []byte(":20:")) {
		i = 0
	}
	return i >= 0 && bytes.Contains(head[i:], []byte("\n:25:"))
}
