package mt940

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/money"
)

// StatementSpec is one MT940 message for Generate.
type StatementSpec struct {
	Reference string // :20:
	Account   string // :25:
	Number    string // :28C:
	Currency  string
	Opening   int64 // signed minor units
	Date      time.Time
	Lines     []Line
	// Closing, when not nil, is written instead of the balance the lines
	// compute, to plant an unbalanced statement.
	Closing *int64
}

// Line is one :61: statement line and its :86:.
type Line struct {
	ValueDate time.Time // the statement's date when zero
	Direction formats.Direction
	Reversal  bool   // writes RC or RD
	Amount    int64  // minor units
	Type      string // four characters; NTRF when empty
	CustRef   string // NONREF when empty
	BankRef   string // none when empty
	EndToEnd  string // written as /EREF/ in :86:
}

// GenerateOptions configure Generate.
type GenerateOptions struct {
	// Envelope wraps each message in {1:}{2:}{4: ... -} blocks.
	Envelope bool
	// CRLF ends lines with CR LF instead of LF.
	CRLF bool
}

// Generate writes the statements as MT940 messages. Its output depends only
// on its input. It refuses (ErrInvalidLine) an unknown currency, an amount
// out of range and a direction other than C or D.
func Generate(w io.Writer, stmts []StatementSpec, opts GenerateOptions) error {
	bw := bufio.NewWriter(w)
	nl := "\n"
	if opts.CRLF {
		nl = "\r\n"
	}
	var err error
	put := func(format string, args ...any) {
		if err == nil {
			_, err = fmt.Fprintf(bw, format+nl, args...)
		}
	}
	for i := range stmts {
		s := &stmts[i]
		c, cerr := currency(s.Currency)
		if cerr != nil {
			return fmt.Errorf("%w: statement %q: %w", ErrInvalidLine, s.Reference, cerr)
		}
		closing := s.Opening
		for j, l := range s.Lines {
			if l.Amount < 0 || l.Amount > formats.MaxAmountMinor || (l.Direction != formats.Credit && l.Direction != formats.Debit) {
				return fmt.Errorf("%w: statement %q line %d", ErrInvalidLine, s.Reference, j+1)
			}
			if l.Direction == formats.Credit {
				closing += l.Amount
			} else {
				closing -= l.Amount
			}
		}
		if s.Closing != nil {
			closing = *s.Closing
		}
		if opts.Envelope {
			put("{1:F01BANKDEFFAXXX0000000000}{2:I940BANKDEFFXXXXN}{4:")
		}
		put(":20:%s", s.Reference)
		put(":25:%s", s.Account)
		put(":28C:%s", s.Number)
		put(":60F:%s", bal(s.Opening, s.Date, c))
		for _, l := range s.Lines {
			vd := l.ValueDate
			if vd.IsZero() {
				vd = s.Date
			}
			mark := string(l.Direction)
			if l.Reversal {
				// A reversal of a credit is a debit, and the other way round.
				mark = "R" + string(l.Direction.Opposite())
			}
			typ := l.Type
			if typ == "" {
				typ = "NTRF"
			}
			cust := l.CustRef
			if cust == "" {
				cust = "NONREF"
			}
			line := fmt.Sprintf(":61:%s%s%s%s%s%s", vd.Format("060102"), s.Date.Format("0102"), mark, comma(l.Amount, c), typ, cust)
			if l.BankRef != "" {
				line += "//" + l.BankRef
			}
			put("%s", line)
			if l.EndToEnd != "" {
				put(":86:/EREF/%s//REMI/USTD//GENERATED/", l.EndToEnd)
			}
		}
		put(":62F:%s", bal(closing, s.Date, c))
		if opts.Envelope {
			put("-}")
		} else {
			put("-")
		}
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

func bal(v int64, d time.Time, c money.Currency) string {
	mark := "C"
	if v < 0 {
		mark, v = "D", -v
	}
	return mark + d.Format("060102") + c.Code + comma(v, c)
}

// comma writes an amount with a decimal comma, as MT940 does: "1234,50";
// a currency without decimals still gets its comma ("500,").
func comma(v int64, c money.Currency) string {
	s := strings.Replace(money.Format(v, c), ".", ",", 1)
	if c.Exponent == 0 {
		s += ","
	}
	return s
}
