package ach

import (
	"errors"
	"fmt"
	"strings"
	"time"

	moov "github.com/moov-io/ach"
)

// hashModulus keeps the ten least significant digits of an entry hash.
const hashModulus = 10_000_000_000

// fileState is what the reader keeps of the file as a whole.
type fileState struct {
	header      bool
	headerLine  int64
	created     time.Time // the file creation date
	control     bool
	controlLine int64
	adv         bool // the file holds ADV batches (decided by its first batch)
	kindKnown   bool
	lastBatch   int64
	totals      totals
	batches     int64
}

// totals are the control totals of a batch or a file, as counted from the
// records themselves.
type totals struct {
	count  int64 // entry and addenda records
	hash   int64 // sum of the 8-digit RDFI routing prefixes
	debit  int64
	credit int64
}

func (t *totals) add(o totals) {
	t.count += o.count
	t.hash += o.hash
	t.debit += o.debit
	t.credit += o.credit
}

// mismatch collects the fields in which a control record differs from what
// the reader counted, for one error message.
type mismatch struct {
	field string
	parts []string
}

func (m *mismatch) check(field string, control, counted int64) {
	if control == counted {
		return
	}
	if m.field == "" {
		m.field = field
	}
	m.parts = append(m.parts, fmt.Sprintf("%s is %d but should be %d", field, control, counted))
}

func (m *mismatch) checkString(field, control, header string) {
	if control == header {
		return
	}
	if m.field == "" {
		m.field = field
	}
	m.parts = append(m.parts, fmt.Sprintf("%s is %q but the header has %q", field, control, header))
}

func (m *mismatch) String() string { return strings.Join(m.parts, "; ") }

// fileHeader reads the file header record. Nothing in it keys, amounts or
// dates an entry (the creation date only dates returns and notices that
// carry no effective date), so every finding here is a warning: a file of
// returns from a bank whose header has a wrong check digit must still apply.
func (r *Reader) fileHeader(rc *record) {
	p := pos{rc.line, rc.off}
	if r.file.header {
		r.fail(p, "", ErrStructure, "a second file header (the first is on line %d)", r.file.headerLine)
		return
	}
	r.file.header, r.file.headerLine = true, rc.line
	for _, f := range []struct {
		name     string
		from, to int
		want     string
	}{{"ImmediateDestination", 3, 13, ""}, {"recordSize", 34, 37, "094"}, {"blockingFactor", 37, 39, "10"}, {"FormatCode", 39, 40, "1"}} {
		// These say the file is NACHA at all: a destination of letters
		// (an obfuscated sample) or another format code is not a file whose
		// other fields can be trusted to mean what NACHA says.
		v := rc.field(f.from, f.to)
		if (f.want == "" && strings.Trim(v, " 0123456789") != "") || (f.want != "" && v != f.want) {
			r.fail(p, f.name, ErrField, "%s %q is not a NACHA file header's", f.name, v)
			return
		}
	}
	if pc := rc.field(1, 3); pc != "01" {
		r.warn(p, WarnPriorityCode, "PriorityCode %q is not 01", pc)
	}
	r.validateHeader(p, rc)
	created, ok := parseDate(rc.field(23, 29))
	if !ok {
		r.warn(p, WarnCreationDate, "FileCreationDate %q is not a date (YYMMDD)", rc.field(23, 29))
		return
	}
	r.file.created = created
}

// validateHeader runs moov-io/ach's file header validation, turning each
// failure into a warning and switching off the check that failed (through
// the ValidateOpts bypass that names it, or by reading the field as its only
// valid value) so that the checks after it still run.
func (r *Reader) validateHeader(p pos, rc *record) {
	fh := moov.NewFileHeader()
	opts := &moov.ValidateOpts{}
	fh.SetValidation(opts)
	fh.Parse(rc.text)
	for range 16 {
		err := fh.Validate()
		if err == nil {
			return
		}
		field, msg := describe(err)
		r.warn(p, WarnFileHeader, "%s", msg)
		switch field {
		case "ImmediateDestination":
			opts.BypassDestinationValidation = true
		case "ImmediateOrigin":
			opts.BypassOriginValidation = true
		case "ImmediateDestinationName", "ImmediateOriginName", "ReferenceCode":
			opts.AllowSpecialCharacters = true
		case "FileCreationDate", "FileCreationTime":
			opts.SkipFileCreationValidation = true
		case "FileIDModifier":
			fh.FileIDModifier = "A"
		case "FormatCode":
			fh.FormatCode = "1"
		default:
			return
		}
		if errors.Is(err, moov.ErrConstructor) {
			// A required field moov-io/ach could not parse (such as a
			// creation date it does not read) fails its inclusion check,
			// which only this bypass skips.
			opts.AllowMissingFileHeader = true
		}
	}
}

// fileControl reads the file control record and compares it with the
// batches read.
func (r *Reader) fileControl(rc *record) {
	p := pos{rc.line, rc.off}
	if r.inBatch {
		r.completeEntry()
		r.fail(p, "", ErrStructure, "file control before the batch control of the batch of line %d", r.batch.line)
		r.inBatch = false
	}
	r.file.control, r.file.controlLine = true, rc.line
	debitTo, creditTo := 43, 55
	var err error
	if r.file.adv {
		debitTo, creditTo = 51, 71
		fc := moov.NewADVFileControl()
		fc.Parse(rc.text)
		err = fc.Validate()
	} else {
		fc := moov.NewFileControl()
		fc.Parse(rc.text)
		err = fc.Validate()
	}
	if err != nil {
		r.failMoov(p, err)
		return
	}
	var c struct{ batches, count, hash, debit, credit int64 }
	fields := []struct {
		name     string
		from, to int
		dst      *int64
	}{
		{"BatchCount", 1, 7, &c.batches},
		{"EntryAddendaCount", 13, 21, &c.count},
		{"EntryHash", 21, 31, &c.hash},
		{"TotalDebitEntryDollarAmountInFile", 31, debitTo, &c.debit},
		{"TotalCreditEntryDollarAmountInFile", debitTo, creditTo, &c.credit},
	}
	for _, f := range fields {
		v, ok := number(rc.field(f.from, f.to))
		if !ok {
			r.fail(p, f.name, ErrField, "%s %q is not a number", f.name, rc.field(f.from, f.to))
			return
		}
		*f.dst = v
	}
	if r.errs > 0 {
		return // the counts of a file with bad records prove nothing more
	}
	var m mismatch
	t := r.file.totals
	m.check("BatchCount", c.batches, r.file.batches)
	m.check("EntryAddendaCount", c.count, t.count)
	m.check("EntryHash", c.hash, t.hash%hashModulus)
	m.check("TotalDebitEntryDollarAmountInFile", c.debit, t.debit)
	m.check("TotalCreditEntryDollarAmountInFile", c.credit, t.credit)
	if len(m.parts) > 0 {
		r.fail(p, m.field, ErrControl, "file control: %s", m.String())
	}
}
