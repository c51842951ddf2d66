package ipm

import (
	"fmt"
	"strconv"
)

// The messages that frame a logical file.
const (
	mtiAdmin      = "1644"
	funcHeader    = "697"
	funcTrailer   = "695"
	checkTotalMod = 10_000_000_000_000_000 // PDS0301 has 16 digits
)

// control checks the logical files of one physical file: each runs from a
// header (1644/697) to a trailer (1644/695), and each trailer's PDS0306
// (messages in the logical file, header and trailer included) and PDS0301
// (the sum of DE4 over them, modulo 10^16: a hash total, since currencies
// are mixed) must agree with what was read. Counts and totals touch money,
// so a mismatch rejects the file; a DE71 out of sequence or a trailer whose
// PDS0105 differs from its header's touches nothing and is a warning.
type control struct {
	open      bool
	files     int
	fileID    string
	headerOff int64
	headerNo  string
	count     int64
	total     uint64
	warn      func(format string, args ...any)
}

// controlError is a control failure about the message being observed.
type controlError struct {
	field string
	err   error
}

func ctlErr(field, format string, args ...any) *controlError {
	return &controlError{field: field, err: fmt.Errorf("%w: %s", ErrControl, fmt.Sprintf(format, args...))}
}

// observe takes the next message of the file.
func (c *control) observe(m *message, off int64) *controlError {
	de24, _ := m.get(24)
	de71, _ := m.get(71)
	header := m.mti == mtiAdmin && de24 == funcHeader
	switch {
	case header && c.open:
		return ctlErr("DE24", "a file header (1644/697, DE71 %s) while the logical file %s begun at offset %d has no trailer", de71, c.fileID, c.headerOff)
	case header:
		id, _ := m.pds.get("0105")
		c.open, c.fileID, c.headerOff, c.headerNo, c.count, c.total = true, id, off, de71, 0, 0
		c.files++
	case !c.open && c.files == 0:
		return ctlErr("MTI", "message %s/%s (DE71 %s) comes before any file header (1644/697)", m.mti, de24, de71)
	case !c.open:
		return ctlErr("MTI", "message %s/%s (DE71 %s) comes after a trailer and before the next file header", m.mti, de24, de71)
	}
	c.count++
	if want := fmt.Sprintf("%08d", c.count); m.has[71] && de71 != want {
		c.warn("message at offset %d: DE71 is %s where %s was expected in logical file %s", off, de71, want, c.fileID)
	}
	c.add(m)
	if m.mti != mtiAdmin || de24 != funcTrailer {
		return nil
	}
	c.open = false
	if id, _ := m.pds.get("0105"); id != c.fileID {
		c.warn("trailer at offset %d (DE71 %s): PDS0105 %q differs from its header's %q", off, de71, id, c.fileID)
	}
	cnt, ok := m.pds.get("0306")
	if !ok || !allDigits(cnt) {
		return ctlErr("PDS0306", "the trailer (DE71 %s) of logical file %s has no numeric message count (PDS0306)", de71, c.fileID)
	}
	if n, _ := strconv.ParseInt(cnt, 10, 64); n != c.count {
		return ctlErr("PDS0306", "the trailer (DE71 %s) of logical file %s declares %d messages (PDS0306), the logical file has %d", de71, c.fileID, n, c.count)
	}
	tot, ok := m.pds.get("0301")
	if !ok || !allDigits(tot) {
		return ctlErr("PDS0301", "the trailer (DE71 %s) of logical file %s has no numeric amount check total (PDS0301)", de71, c.fileID)
	}
	if n, _ := strconv.ParseUint(tot, 10, 64); n != c.total {
		return ctlErr("PDS0301", "the trailer (DE71 %s) of logical file %s declares an amount check total of %d (PDS0301), the sum of DE4 is %d", de71, c.fileID, n, c.total)
	}
	return nil
}

// unreadable counts a message that could not be read whole, and its DE4
// when it decoded (m not nil), so that its error is not repeated as a
// mismatch at the trailer.
func (c *control) unreadable(m *message) {
	if !c.open {
		return
	}
	c.count++
	if m != nil {
		c.add(m)
	}
}

// add adds the message's DE4 to the amount check total.
func (c *control) add(m *message) {
	if v, ok := m.get(4); ok && allDigits(v) {
		n, _ := strconv.ParseUint(v, 10, 64)
		c.total = (c.total + n%checkTotalMod) % checkTotalMod
	}
}

// finish is the verdict at the end of the file.
func (c *control) finish() *controlError {
	switch {
	case c.open:
		return ctlErr("", "the logical file %s begun at offset %d (header DE71 %s) has no trailer (1644/695)", c.fileID, c.headerOff, c.headerNo)
	case c.files == 0:
		return ctlErr("", "the file holds no logical file (no header 1644/697)")
	}
	return nil
}
