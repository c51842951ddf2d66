package bai2

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/money"
)

// state is where the reader stands in the file's structure:
// 01 (02 (03 16* 49)* 98)* 99.
type state int8

const (
	beforeFile state = iota
	inFile
	inGroup
	inAccount
	afterFile
)

// fileState accumulates what the 99 file trailer checks.
type fileState struct {
	records int64 // physical records since the 01, itself included
	groups  int64
	total   int64 // sum of the 98 control totals
	broken  bool  // a group was abandoned, so the total cannot be checked
}

// groupState is the open group's header and what its 98 trailer checks.
type groupState struct {
	originator string
	status     int
	asOf       time.Time
	modifier   int
	currency   string // the group's currency, USD when not given
	records    int64
	accounts   int64
	total      int64  // sum of the 49 control totals
	broken     bool   // an account was abandoned, so the total cannot be checked
	rejected   bool   // its details are not returned as Records
	prev       keySeq // key sequence of the account section closed last
}

// accountState is the open account and what its 49 trailer checks.
type accountState struct {
	sum       AccountSummary
	currency  money.Currency
	keyPrefix string
	total     int64 // sum of the 03 and 16 amounts
	records   int64
	broken    bool // a record of the account failed, so the total cannot be checked
	seq       keySeq
}

// keySeq is the state that makes detail keys unique within an account: the
// last bank reference and how often it repeated, and how many details had
// none. Adjacent sections of the same account in a group share one keySeq,
// because some banks report one account in several sections (one per value
// date) under a single as-of date.
type keySeq struct {
	account string // pii account ID
	lastRef string
	refRun  int // how many adjacent details carried lastRef
	blank   int // details without a bank reference so far
}

// detailInfo is the resolved type code of a detail, cached per code so that
// the Detail string is built once.
type detailInfo struct {
	tc     TypeCode
	detail string
	err    error
}

// Reader reads the transaction details of a BAI2 file as Records. It
// implements formats.Reader. Build one with NewReader.
type Reader struct {
	opts     Options
	sc       *scanner
	st       state
	file     fileState
	grp      groupState
	acct     accountState
	types    map[int]detailInfo
	queue    []*formats.ParseError
	errs     int
	first    *formats.ParseError
	physical int64
	header   bool // an 01 record has been read
	notBAI2  bool
	stopped  bool // no more input is read; pending errors drain, then the verdict
	done     bool
	final    error
	warnings []Warning
	nwarn    int
	// warnedSplit and warnedJoin keep the line-shape warnings to one each.
	warnedSplit, warnedJoin bool
}

// NewReader returns a Reader of r. Configuration errors, such as a missing
// Hasher, are returned by the first call to Next.
func NewReader(r io.Reader, opts Options) *Reader {
	opts = opts.withDefaults()
	rd := &Reader{
		opts:  opts,
		sc:    newScanner(r, opts.Limits.MaxLineBytes, opts.MaxRecordBytes),
		types: make(map[int]detailInfo),
	}
	if opts.Hasher.IsZero() {
		rd.done, rd.final = true, ErrNoHasher
	}
	return rd
}

// Next returns the next transaction detail as a Record. It returns a
// *formats.ParseError for each bad record, after which it may be called again
// to continue. At the end it returns io.EOF if the file passed every check,
// and otherwise a *FileError, which is final.
func (r *Reader) Next() (formats.Record, error) {
	for {
		if len(r.queue) > 0 {
			pe := r.queue[0]
			r.queue = r.queue[:copy(r.queue, r.queue[1:])]
			return formats.Record{}, pe
		}
		if r.done {
			return formats.Record{}, r.final
		}
		if r.stopped || r.errs >= r.opts.MaxErrors {
			r.stopped = true
			r.finish()
			continue
		}
		if rec, ok := r.step(); ok {
			return rec, nil
		}
	}
}

// step reads and processes one logical record. It reports whether rec is a
// Record to return: a detail that raised no error.
func (r *Reader) step() (rec formats.Record, ok bool) {
	lr, err := r.sc.next()
	if err == io.EOF {
		r.finish()
		return rec, false
	}
	var pe *formats.ParseError
	if errors.As(err, &pe) {
		r.fail(pe)
		r.stopped = true
		return rec, false
	}
	if err != nil {
		r.done, r.final = true, err
		return rec, false
	}
	r.physical += lr.n
	if r.physical > r.opts.Limits.MaxRecords {
		r.fail(lr.errAt(0, "", fmt.Errorf("%w: more than %d physical records", formats.ErrTooLarge, r.opts.Limits.MaxRecords)))
		r.stopped = true
		return rec, false
	}
	before := r.errs
	if r.sc.split && !r.warnedSplit {
		r.warnedSplit = true
		r.warn(lr.errAt(0, "", nil), WarnRecordsOnOneLine, "several records share one line")
	}
	if r.sc.joined && !r.warnedJoin {
		r.warnedJoin = true
		r.warn(lr.errAt(0, "", nil), WarnRecordsOnOneLine, "the text of a detail continues on a line without a record code")
	}
	switch {
	case lr.problem != nil && lr.code == "99" && errors.Is(lr.problem.Err, errNoSlash):
		r.warn(lr.problem, WarnNoSlash, "file trailer (99) has no closing slash")
	case lr.problem != nil && knownCode(lr.code):
		r.fail(lr.problem)
	}
	rec, ok = r.dispatch(lr)
	return rec, ok && r.errs == before
}

func (r *Reader) dispatch(lr *logical) (formats.Record, bool) {
	if r.st == afterFile {
		r.fail(lr.errAt(0, "record_code", fmt.Errorf("%w: record after the file trailer (99)", ErrStructure)))
		return formats.Record{}, false
	}
	if !r.header && lr.code != "01" {
		// Without a file header this is not a BAI2 file; reading on would
		// only report every line of it.
		r.notBAI2, r.stopped = true, true
		r.fail(recordTypeError(lr))
		return formats.Record{}, false
	}
	switch lr.code {
	case "01":
		r.fileHeader(lr)
	case "02":
		r.groupHeader(lr)
	case "03":
		r.accountHeader(lr)
	case "16":
		return r.detail(lr)
	case "49":
		r.accountTrailer(lr)
	case "98":
		r.groupTrailer(lr)
	case "99":
		r.fileTrailer(lr)
	default:
		r.count(lr)
		r.fail(recordTypeError(lr))
	}
	return formats.Record{}, false
}

func knownCode(code string) bool {
	switch code {
	case "01", "02", "03", "16", "49", "88", "98", "99":
		return true
	}
	return false
}

func recordTypeError(lr *logical) *formats.ParseError {
	if lr.code == "" {
		return lr.errAt(0, "record_code", fmt.Errorf("%w: line does not start with a two-digit record code", ErrSyntax))
	}
	if lr.code == "88" {
		return lr.errAt(0, "record_code", fmt.Errorf("%w: continuation (88) with no record to continue", ErrStructure))
	}
	return lr.errAt(0, "record_code", fmt.Errorf("%w %s", ErrRecordType, lr.code))
}

// count adds a logical record's physical records to every open level.
func (r *Reader) count(lr *logical) {
	if r.st == beforeFile || r.st == afterFile {
		return
	}
	r.file.records += lr.n
	if r.st >= inGroup {
		r.grp.records += lr.n
	}
	if r.st == inAccount {
		r.acct.records += lr.n
	}
}

// fail queues a ParseError. An error inside an account makes its control
// total uncheckable, so that one fault is not reported twice.
func (r *Reader) fail(pe *formats.ParseError) {
	r.queue = append(r.queue, pe)
	r.errs++
	if r.first == nil {
		r.first = pe
	}
	if r.st == inAccount {
		r.acct.broken = true
	}
}

// finish settles the verdict at the end of the input or when reading stops.
func (r *Reader) finish() {
	if !r.stopped {
		at := &formats.ParseError{Line: r.sc.line + 1, Offset: r.sc.offset, Field: "record_code"}
		switch r.st {
		case afterFile:
		case beforeFile:
			r.notBAI2 = true
			at.Err = fmt.Errorf("%w: file is empty, with no file header (01)", ErrStructure)
			r.fail(at)
		default:
			at.Err = fmt.Errorf("%w: file ends without a file trailer (99)", ErrStructure)
			r.fail(at)
		}
	}
	r.done = true
	r.final = io.EOF
	if r.errs > 0 {
		r.final = &FileError{First: r.first, Count: r.errs, Stopped: r.stopped, notBAI2: r.notBAI2}
	}
}

// abandonAccount closes an account whose trailer is missing. Its amounts
// never reach the group, so the group's total is no longer checked.
func (r *Reader) abandonAccount() {
	r.grp.prev = r.acct.seq
	r.grp.broken = true
	r.st = inGroup
}

// abandonGroup closes a group whose trailer is missing, likewise.
func (r *Reader) abandonGroup() {
	r.file.broken = true
	r.st = inFile
}
