package bai2

import (
	"fmt"

	"github.com/clearing-dev/clearing/internal/money"
)

// fileHeader reads an 01 record: sender, receiver, creation date and time,
// file id, physical record length, block size and version. Only version 2
// is read; version 1 differs in its fields and version 3 is another format.
func (r *Reader) fileHeader(lr *logical) {
	if r.st != beforeFile {
		r.count(lr)
		r.fail(lr.errAt(0, "record_code", fmt.Errorf("%w: second file header (01)", ErrStructure)))
		return
	}
	r.header = true
	r.st = inFile
	r.count(lr)
	c := cursor{b: lr.content}
	for _, f := range []struct{ field, what string }{
		{"sender_id", "sender identification"}, {"receiver_id", "receiver identification"},
	} {
		v := c.next()
		if err := checkText(v, f.what); err != nil {
			r.fail(lr.errAt(c.at, f.field, err))
			return
		}
		if len(v) == 0 {
			r.fail(lr.errAt(c.at, f.field, fmt.Errorf("%w: %s", ErrMissingField, f.what)))
			return
		}
	}
	if _, err := parseDate(c.next(), "file creation date"); err != nil {
		r.fail(lr.errAt(c.at, "file_date", err))
		return
	}
	if !r.timeField(lr, &c, "file_time", "file creation time") {
		return
	}
	if id := c.next(); len(id) == 0 {
		r.fail(lr.errAt(c.at, "file_id", fmt.Errorf("%w: file identification number", ErrMissingField)))
		return
	}
	for _, field := range []string{"record_length", "block_size"} {
		if v := c.next(); len(v) > 0 && !allDigits(v) {
			r.fail(lr.errAt(c.at, field, fmt.Errorf("%w: %s %q is not a number", ErrField, field, v)))
			return
		}
	}
	if v := c.next(); string(v) != "2" {
		r.fail(lr.errAt(c.at, "version", fmt.Errorf("%w: version %q, want 2", ErrVersion, v)))
	}
}

// groupHeader reads an 02 record: ultimate receiver, originator, group
// status, as-of date and time, currency and as-of-date modifier.
func (r *Reader) groupHeader(lr *logical) {
	switch r.st {
	case inAccount:
		r.fail(lr.errAt(0, "record_code", fmt.Errorf("%w: group header (02) before the account trailer (49)", ErrStructure)))
		r.abandonAccount()
		r.abandonGroup()
	case inGroup:
		r.fail(lr.errAt(0, "record_code", fmt.Errorf("%w: group header (02) before the group trailer (98)", ErrStructure)))
		r.abandonGroup()
	}
	r.st = inGroup
	r.file.groups++
	r.grp = groupState{currency: "USD", rejected: true}
	r.count(lr)
	c := cursor{b: lr.content}
	if err := checkText(c.next(), "ultimate receiver identification"); err != nil {
		r.fail(lr.errAt(c.at, "receiver_id", err))
		return
	}
	orig := c.next()
	if len(orig) == 0 {
		r.fail(lr.errAt(c.at, "originator_id", fmt.Errorf("%w: originator identification", ErrMissingField)))
		return
	}
	if err := checkID(orig, "originator identification"); err != nil {
		r.fail(lr.errAt(c.at, "originator_id", err))
		return
	}
	r.grp.originator = string(orig)
	status := c.next()
	switch string(status) {
	case "1", "3":
		r.grp.status = int(status[0] - '0')
	case "2", "4":
		what := map[byte]string{'2': "deletion", '4': "test only"}[status[0]]
		r.fail(lr.errAt(c.at, "group_status", fmt.Errorf("%w: status %s (%s) cannot feed a reconciliation", ErrGroupStatus, status, what)))
		return
	default:
		r.fail(lr.errAt(c.at, "group_status", fmt.Errorf("%w: group status %q is not 1-4", ErrField, status)))
		return
	}
	d, err := parseDate(c.next(), "as-of date")
	if err != nil {
		r.fail(lr.errAt(c.at, "as_of_date", err))
		return
	}
	r.grp.asOf = d
	if !r.timeField(lr, &c, "as_of_time", "as-of time") {
		return
	}
	if cur := c.next(); len(cur) > 0 {
		mc, err := money.LookupCurrency(string(cur))
		if err != nil {
			r.fail(lr.errAt(c.at, "currency", fmt.Errorf("%w: %w", ErrField, err)))
			return
		}
		r.grp.currency = mc.Code
	}
	switch m := c.next(); {
	case len(m) == 0:
	case len(m) == 1 && m[0] >= '1' && m[0] <= '4':
		r.grp.modifier = int(m[0] - '0')
	default:
		r.fail(lr.errAt(c.at, "as_of_modifier", fmt.Errorf("%w: as-of-date modifier %q is not 1-4", ErrField, m)))
		return
	}
	r.grp.rejected = false
}

// groupTrailer reads a 98 record and checks it: its control total is the
// sum of the group's account control totals, and it counts the group's
// accounts and physical records, 02 and 98 included.
func (r *Reader) groupTrailer(lr *logical) {
	switch r.st {
	case inAccount:
		r.fail(lr.errAt(0, "record_code", fmt.Errorf("%w: group trailer (98) before the account trailer (49)", ErrStructure)))
		r.abandonAccount()
	case inGroup:
	default:
		r.count(lr)
		r.fail(lr.errAt(0, "record_code", fmt.Errorf("%w: group trailer (98) outside a group", ErrStructure)))
		return
	}
	r.count(lr)
	r.st = inFile
	total, ok := r.trailer(lr, "group", r.grp.total, r.grp.broken, []int64{r.grp.accounts, r.grp.records}, []string{"accounts", "records"})
	if !ok || !addAmount(&r.file.total, total) {
		r.file.broken = true
	}
}

// fileTrailer reads a 99 record and checks it: its control total is the sum
// of the group control totals, and it counts the groups and every physical
// record of the file, 01 and 99 included.
func (r *Reader) fileTrailer(lr *logical) {
	switch r.st {
	case inAccount:
		r.fail(lr.errAt(0, "record_code", fmt.Errorf("%w: file trailer (99) before the account trailer (49)", ErrStructure)))
		r.abandonAccount()
		r.abandonGroup()
	case inGroup:
		r.fail(lr.errAt(0, "record_code", fmt.Errorf("%w: file trailer (99) before the group trailer (98)", ErrStructure)))
		r.abandonGroup()
	}
	r.count(lr)
	r.st = afterFile
	r.trailer(lr, "file", r.file.total, r.file.broken, []int64{r.file.groups, r.file.records}, []string{"groups", "records"})
}

// trailer reads a control total and counts from a trailer and compares them
// with what the reader counted. It returns the declared total and whether it
// could be read and matched. broken skips the total, which an earlier error
// has made meaningless; a total that is unreadable or wrong makes the next
// level's total meaningless in turn, so one fault is reported once.
func (r *Reader) trailer(lr *logical, level string, want int64, broken bool, counts []int64, names []string) (int64, bool) {
	c := cursor{b: lr.content}
	total, err := parseAmount(c.next(), true)
	if err != nil {
		r.fail(lr.errAt(c.at, "control_total", err))
		return 0, false
	}
	ok := true
	if !broken && total != want {
		r.fail(lr.errAt(c.at, "control_total", fmt.Errorf("%w: %s control total %d, the amounts it covers sum to %d",
			ErrControlTotal, level, total, want)))
		ok = false
	}
	for i, n := range counts {
		field := names[i][:len(names[i])-1] + "_count"
		got, err := parseCount(c.next(), "number of "+names[i])
		if err != nil {
			r.fail(lr.errAt(c.at, field, err))
			continue
		}
		if got != n && !r.opts.Loosen.RecordCounts {
			r.fail(lr.errAt(c.at, field, fmt.Errorf("%w: %s trailer counts %d %s, the %s has %d",
				ErrRecordCount, level, got, names[i], level, n)))
		}
	}
	return total, ok
}
