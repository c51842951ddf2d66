package iso8583

import (
	"time"

	"github.com/clearing-dev/clearing/formats"
)

// leadDays is how far after today a date without a year may fall and still
// be taken as this year's. Settlement dates (DE15) run a few days ahead of
// the messages that carry them, and local dates (DE13) a day ahead of UTC;
// a month covers both with room to spare.
const leadDays = 30

// yearOf gives ISO 8583 dates, which carry no year, a year by a rule that
// does not depend on the order of the messages: a month and day are the
// latest such date on or before today plus leadDays. A file read again any
// day from leadDays before its dates to 365-leadDays days after them gets
// the same years, and so the same value dates and digests. After that the
// years move on by one and a re-ingest meets conflicts, never postings.
type yearOf struct {
	limit time.Time // today plus leadDays, at UTC midnight
}

func newYearOf(now time.Time) yearOf {
	now = now.UTC()
	return yearOf{limit: formats.Date(now.Year(), now.Month(), now.Day()).AddDate(0, 0, leadDays)}
}

// date returns the date of mmdd ("0229"), or false when it is not a
// calendar date in either candidate year.
func (y yearOf) date(mmdd string) (time.Time, bool) {
	if len(mmdd) != 4 || !allDigits(mmdd) {
		return time.Time{}, false
	}
	m := time.Month(int(mmdd[0]-'0')*10 + int(mmdd[1]-'0'))
	d := int(mmdd[2]-'0')*10 + int(mmdd[3]-'0')
	if m < 1 || m > 12 || d < 1 {
		return time.Time{}, false
	}
	for _, year := range []int{y.limit.Year(), y.limit.Year() - 1} {
		t := formats.Date(year, m, d)
		if t.Month() != m || t.Day() != d || t.After(y.limit) {
			continue
		}
		return t, true
	}
	return time.Time{}, false
}

// validClock reports whether hhmmss is a time of day.
func validClock(hhmmss string) bool {
	if len(hhmmss) != 6 || !allDigits(hhmmss) {
		return false
	}
	h := int(hhmmss[0]-'0')*10 + int(hhmmss[1]-'0')
	m := int(hhmmss[2]-'0')*10 + int(hhmmss[3]-'0')
	s := int(hhmmss[4]-'0')*10 + int(hhmmss[5]-'0')
	return h < 24 && m < 60 && s < 60
}

// validDateTime reports whether s is a date and time MMDDhhmmss.
func (y yearOf) validDateTime(s string) bool {
	if len(s) != 10 {
		return false
	}
	_, ok := y.date(s[:4])
	return ok && validClock(s[4:])
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
