package bai2

import (
	"fmt"
)

// maxDistributions bounds funds type D. The spec's field holds one digit in
// most bank guides; 99 leaves room for banks that use two.
const maxDistributions = 99

// fundsError names the field at fault and why.
type fundsError struct {
	pos   int
	field string
	err   error
}

// parseFunds reads a funds type and the fields that its type adds: a value
// date and time for V, three availability amounts for S, and a count of
// (days, amount) pairs for D. signed allows signs on the amounts, as in 03
// records. keep says whether distributions are stored or only validated.
func parseFunds(c *cursor, signed, keep bool) (Funds, *fundsError) {
	var f Funds
	ft := c.next()
	typeAt := c.at
	switch string(ft) {
	case "":
	case "0":
		f.Type = "0"
	case "1":
		f.Type = "1"
	case "2":
		f.Type = "2"
	case "Z":
		f.Type = "Z"
	case "V":
		f.Type = "V"
		d, err := parseDate(c.next(), "value date")
		if err != nil {
			return f, &fundsError{c.at, "value_date", err}
		}
		f.ValueDate = d
		t := c.next()
		if err := checkTime(t, "value time"); err != nil {
			return f, &fundsError{c.at, "value_time", err}
		}
		if len(t) > 0 {
			f.ValueTime = string(t)
		}
	case "S":
		f.Type = "S"
		for _, dst := range []*int64{&f.Immediate, &f.OneDay, &f.TwoOrMoreDays} {
			a := c.next()
			if len(a) == 0 {
				continue // a defaulted availability amount is zero
			}
			v, err := parseAmount(a, signed)
			if err != nil {
				return f, &fundsError{c.at, "availability_amount", err}
			}
			*dst = v
		}
	case "D":
		f.Type = "D"
		if fe := parseDistributions(c, &f, signed, keep); fe != nil {
			return f, fe
		}
	default:
		return f, &fundsError{typeAt, "funds_type", fmt.Errorf("%w: funds type %q", ErrField, ft)}
	}
	return f, nil
}

func parseDistributions(c *cursor, f *Funds, signed, keep bool) *fundsError {
	n, err := parseCount(c.next(), "number of distributions")
	if err != nil {
		return &fundsError{c.at, "distribution_count", err}
	}
	if n > maxDistributions {
		return &fundsError{c.at, "distribution_count",
			fmt.Errorf("%w: %d distributions, at most %d", ErrField, n, maxDistributions)}
	}
	for i := int64(0); i < n; i++ {
		days, err := parseCount(c.next(), "availability days")
		if err != nil {
			return &fundsError{c.at, "distribution_days", err}
		}
		amt, err := parseAmount(c.next(), signed)
		if err != nil {
			return &fundsError{c.at, "distribution_amount", err}
		}
		if keep {
			f.Distributions = append(f.Distributions, Distribution{Days: int(days), Amount: amt})
		}
	}
	return nil
}
