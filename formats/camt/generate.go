package camt

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/money"
)

// StatementSpec is one Stmt (Rpt, Ntfctn) for Generate.
type StatementSpec struct {
	ID       string
	IBAN     string
	Currency string
	// Opening is the signed opening booked balance (OPBD) in minor units.
	Opening int64
	Date    time.Time // the statement's booking day
	Entries []Entry
	// Closing, when not nil, is written as the CLBD instead of the
	// balance the entries compute, to plant an unbalanced statement.
	Closing *int64
	// NoBalances leaves both balances out (as a camt.054 does).
	NoBalances bool
}

// Entry is one Ntry for Generate.
type Entry struct {
	Ref        string // AcctSvcrRef; empty writes none
	Amount     int64  // minor units, > 0 unless a notice
	Direction  formats.Direction
	Reversal   bool
	Status     string    // BOOK when empty
	ValueDate  time.Time // the statement's date when zero
	Domain     string    // bank transaction code; PMNT/RCDT/ESCT when empty
	Family     string
	SubFamily  string
	EndToEndID string
	// Charges, in minor units, are included in Amount and written as one
	// debit charge of a debit entry (ChrgInclInd true from version 03).
	Charges int64
	// Details, when there are two or more, make the entry a batch; their
	// amounts should add up to Amount.
	Details []Detail
}

// Detail is one TxDtls of a batch entry.
type Detail struct {
	Amount     int64
	Direction  formats.Direction
	EndToEndID string
}

// GenerateOptions configure Generate.
type GenerateOptions struct {
	// Message is "052", "053" (the default) or "054".
	Message string
	// Version is "001.02" to "001.13"; "001.08" when empty.
	Version string
	MsgID   string
	Created time.Time
}

// Generate writes a camt document holding the given statements. Its output
// depends only on its input. It refuses (ErrInvalidEntry) what it cannot
// write as a valid message: an unknown currency, an amount above
// formats.MaxAmountMinor, a direction other than C or D.
func Generate(w io.Writer, stmts []StatementSpec, opts GenerateOptions) error {
	if opts.Message == "" {
		opts.Message = "053"
	}
	if opts.Version == "" {
		opts.Version = "001.08"
	}
	m, _, err := parseNamespace(nsPrefix + "camt." + opts.Message + "." + opts.Version)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidEntry, err)
	}
	ver, _ := strconv.Atoi(opts.Version[4:])
	g := &gen{w: bufio.NewWriter(w), ver: ver}
	g.printf("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Document xmlns=\"%s\">\n<%s>\n", nsPrefix+m.name, m.element)
	g.printf("<GrpHdr><MsgId>%s</MsgId><CreDtTm>%s</CreDtTm></GrpHdr>\n", esc(opts.MsgID), opts.Created.UTC().Format("2006-01-02T15:04:05"))
	for i := range stmts {
		if err := g.statement(m, &stmts[i]); err != nil {
			return err
		}
	}
	g.printf("</%s>\n</Document>\n", m.element)
	if g.err != nil {
		return g.err
	}
	return g.w.Flush()
}

type gen struct {
	w   *bufio.Writer
	ver int
	err error
}

func (g *gen) printf(format string, args ...any) {
	if g.err == nil {
		_, g.err = fmt.Fprintf(g.w, format, args...)
	}
}

func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func (g *gen) statement(m message, s *StatementSpec) error {
	c, err := currency(s.Currency)
	if err != nil {
		return fmt.Errorf("%w: statement %q: %w", ErrInvalidEntry, s.ID, err)
	}
	closing := s.Opening
	for i, e := range s.Entries {
		if e.Amount < 0 || e.Amount > formats.MaxAmountMinor || (e.Direction != formats.Credit && e.Direction != formats.Debit) {
			return fmt.Errorf("%w: statement %q entry %d", ErrInvalidEntry, s.ID, i+1)
		}
		if e.Status != "" && e.Status != "BOOK" {
			continue
		}
		if e.Direction == formats.Credit {
			closing += e.Amount
		} else {
			closing -= e.Amount
		}
	}
	if s.Closing != nil {
		closing = *s.Closing
	}
	day := s.Date.Format(time.DateOnly)
	g.printf("<%s>\n<Id>%s</Id>\n<Acct><Id><IBAN>%s</IBAN></Id><Ccy>%s</Ccy></Acct>\n", m.statement, esc(s.ID), esc(s.IBAN), c.Code)
	if !s.NoBalances {
		for _, b := range []struct {
			code string
			v    int64
		}{{"OPBD", s.Opening}, {"CLBD", closing}} {
			ind, v := "CRDT", b.v
			if v < 0 {
				ind, v = "DBIT", -v
			}
			g.printf("<Bal><Tp><CdOrPrtry><Cd>%s</Cd></CdOrPrtry></Tp><Amt Ccy=\"%s\">%s</Amt><CdtDbtInd>%s</CdtDbtInd><Dt><Dt>%s</Dt></Dt></Bal>\n",
				b.code, c.Code, money.Format(v, c), ind, day)
		}
	}
	for i := range s.Entries {
		g.entry(c, day, &s.Entries[i])
	}
	g.printf("</%s>\n", m.statement)
	return nil
}

func ind(d formats.Direction) string {
	if d == formats.Debit {
		return "DBIT"
	}
	return "CRDT"
}

func (g *gen) entry(c money.Currency, day string, e *Entry) {
	status := e.Status
	if status == "" {
		status = "BOOK"
	}
	g.printf("<Ntry>\n<Amt Ccy=\"%s\">%s</Amt><CdtDbtInd>%s</CdtDbtInd>", c.Code, money.Format(e.Amount, c), ind(e.Direction))
	if e.Reversal {
		g.printf("<RvslInd>true</RvslInd>")
	}
	if g.ver >= 9 {
		g.printf("<Sts><Cd>%s</Cd></Sts>", esc(status))
	} else {
		g.printf("<Sts>%s</Sts>", esc(status))
	}
	value := day
	if !e.ValueDate.IsZero() {
		value = e.ValueDate.Format(time.DateOnly)
	}
	g.printf("<BookgDt><Dt>%s</Dt></BookgDt><ValDt><Dt>%s</Dt></ValDt>", day, value)
	if e.Ref != "" {
		g.printf("<AcctSvcrRef>%s</AcctSvcrRef>", esc(e.Ref))
	}
	d, f, s := e.Domain, e.Family, e.SubFamily
	if d == "" {
		d, f, s = "PMNT", "RCDT", "ESCT"
	}
	g.printf("<BkTxCd><Domn><Cd>%s</Cd><Fmly><Cd>%s</Cd><SubFmlyCd>%s</SubFmlyCd></Fmly></Domn></BkTxCd>\n", esc(d), esc(f), esc(s))
	g.printf("<NtryDtls>")
	if len(e.Details) >= 2 {
		g.printf("<Btch><NbOfTxs>%d</NbOfTxs></Btch>\n", len(e.Details))
		for _, dt := range e.Details {
			g.tx(c, dt.EndToEndID, dt.Amount, dt.Direction, 0)
		}
	} else {
		g.tx(c, e.EndToEndID, e.Amount-e.Charges, e.Direction, e.Charges)
	}
	g.printf("</NtryDtls>\n</Ntry>\n")
}

func (g *gen) tx(c money.Currency, e2e string, v int64, d formats.Direction, charges int64) {
	g.printf("<TxDtls>")
	if e2e != "" {
		g.printf("<Refs><EndToEndId>%s</EndToEndId></Refs>", esc(e2e))
	}
	if g.ver >= 3 {
		g.printf("<Amt Ccy=\"%s\">%s</Amt><CdtDbtInd>%s</CdtDbtInd>", c.Code, money.Format(v, c), ind(d))
	} else {
		g.printf("<AmtDtls><TxAmt><Amt Ccy=\"%s\">%s</Amt></TxAmt></AmtDtls>", c.Code, money.Format(v, c))
	}
	if charges > 0 {
		if g.ver >= 3 {
			g.printf("<Chrgs><Rcrd><Amt Ccy=\"%s\">%s</Amt><CdtDbtInd>DBIT</CdtDbtInd><ChrgInclInd>true</ChrgInclInd></Rcrd></Chrgs>", c.Code, money.Format(charges, c))
		} else {
			g.printf("<Chrgs><Amt Ccy=\"%s\">%s</Amt></Chrgs>", c.Code, money.Format(charges, c))
		}
	}
	g.printf("</TxDtls>\n")
}
