// Package formats defines the Record that every clearing-file format produces
// and that the ingest path and statement import consume. A format package
// turns bytes into Records; it knows nothing about PostgreSQL, and the ledger
// knows nothing about file formats.
package formats

import (
	"crypto/sha256"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/clearing-dev/clearing/internal/pii"
)

// Kind says what a record asks of the ledger.
type Kind string

// The kinds of record.
const (
	// Clearing is a new movement of money. It posts two legs: the
	// counterparty account and the source's settlement account.
	Clearing Kind = "clearing"
	// Return undoes an earlier posting found through the record's Link: ACH
	// returns and their dishonored and contested follow-ups.
	Return Kind = "return"
	// Reversal undoes an earlier posting, in whole or in part, found through
	// the record's Link: ISO 8583 04xx messages.
	Reversal Kind = "reversal"
	// Notice is a non-monetary record (an ACH NOC or prenote, an ISO 8583
	// authorisation, a zero-dollar entry). It is recorded and shown by lookup
	// but posts no legs.
	Notice Kind = "notice"
	// Skip is not an intent at all (an ISO 8583 response or network
	// management message). It is counted and otherwise ignored.
	Skip Kind = "skip"
)

// Direction is the side of the counterparty account that a record moves.
type Direction string

// The two directions.
const (
	// Credit pays the counterparty: its account is credited and the
	// settlement account debited.
	Credit Direction = "C"
	// Debit collects from the counterparty: its account is debited and the
	// settlement account credited.
	Debit Direction = "D"
)

// Opposite returns the other direction.
func (d Direction) Opposite() Direction {
	if d == Credit {
		return Debit
	}
	return Credit
}

// LineType classifies a statement line. It is set by the formats that feed
// statement import and ignored by ingest.
type LineType string

// The statement line types.
const (
	Payment         LineType = "payment"
	ReturnLine      LineType = "return"
	Fee             LineType = "fee"
	SettlementTotal LineType = "settlement_total"
)

// Record is one intent read from a file: what the ledger needs to post it
// once, and nothing personal. Account numbers and PANs arrive here already
// reduced to a pii.Account.
type Record struct {
	// Key is the record's own natural key (DESIGN §4), such as
	// "ach:1234567890:2026-11-29:091000010000001". Returns and reversals
	// post under a key derived from their original (see Link); their own Key
	// names them in the audit trail when the original cannot be found.
	Key  string
	Kind Kind
	// Detail is a short description without personal data, such as
	// "PPD 22 credit", "return R01" or "NOC C01 (routing number)".
	Detail string
	// Reference is the value reconciliation matches on, such as an ACH trace
	// number or an ISO 8583 RRN. Returns and reversals are found through it.
	Reference string
	// AltReference is a second value by which this record can be found as
	// an original, such as ISO 8583 acquirer, STAN and transmission time for
	// reversals that carry DE90 instead of an RRN. Empty when unused.
	AltReference string
	// Amount is in minor units of Currency, never negative and never above
	// MaxAmountMinor; Direction carries the sign.
	Amount    int64
	Currency  string // ISO 4217 alphabetic code
	Direction Direction
	// SettleAmount and SettleCurrency are what the other side settles the
	// record in when that is another currency than the record's own, such
	// as an IPM record's reconciliation amount (DE5 in DE50): a JPY
	// purchase settled in USD. Reconciliation nets settlement totals in
	// them; the ledger's legs stay in Amount and Currency. Zero and empty
	// when the record settles in its own currency. They never enter the
	// digest: they follow from the amount and the scheme's rate.
	SettleAmount   int64
	SettleCurrency string
	// SettleGroup names the payout or batch the other side settles the
	// record in, when the file says so (a CSV mapping's settlement_group
	// column): a settlement total that names the group settles exactly
	// its records. Empty when unknown. It never enters the digest.
	SettleGroup string
	// Account is the counterparty account; its zero value means unknown.
	Account   pii.Account
	ValueDate time.Time // a calendar date at UTC midnight
	// Link finds the original of a Return or Reversal.
	Link *Link
	// LineType is set by formats that feed statement import.
	LineType LineType
	// Repeat marks a record that declares itself a retransmission of an
	// earlier message with the same key, such as an ISO 8583 0201 or 0401.
	// Arriving in the same file as its original, it is a duplicate, not an
	// in-file duplicate for an operator. It never enters the digest.
	Repeat bool
	// Line is the 1-based line (or, for binary formats, message index) of
	// the record's first byte; Offset is the byte offset of that byte.
	Line   int64
	Offset int64
}

// MaxAmountMinor is the largest amount, in minor units, that one Record may
// carry: 10^15, that is 10,000,000,000,000.00 USD or 10^15 JPY, far above any
// single payment or settlement a clearing file holds (an ACH amount field
// has 10 digits, ISO 8583 DE4 12). The limit exists so that sums stay sane:
// the ledger is append-only, so one absurd amount, once posted, could never
// be taken out again, and every reader refuses a record above it, rejecting
// the file whole and naming the line or offset. Sums of capped amounts can
// still pass int64 (ten thousand of them do), so balances and totals are
// summed as numeric and carried as money.Total.
const MaxAmountMinor int64 = 1_000_000_000_000_000

// CheckAmount returns an error wrapping ErrAmountTooLarge when minor is above
// MaxAmountMinor. The amount is repeated in the message: it is not personal
// data, and it is what an operator looks for in the file.
func CheckAmount(minor int64) error {
	if minor > MaxAmountMinor {
		return fmt.Errorf("%w: %d minor units, the limit is %d", ErrAmountTooLarge, minor, MaxAmountMinor)
	}
	return nil
}

// Link finds the posting that a return or reversal undoes.
//
// The ingest path looks for the one clearing posting whose Reference (or
// AltReference, with ByAlt) equals Reference and whose key starts with
// KeyPrefix. The record then posts under that posting's key plus Suffix, and
// reverses the posting whose key is its own key without the last
// ":segment". So a return of K posts K:return and reverses K, and a
// dishonored return posts K:return:dishonored and reverses K:return.
// Anything other than exactly one original is quarantined, never guessed.
//
// Fallback, when set, is a second way to the same original, tried only
// when Reference finds none: the posting whose AltReference equals
// Fallback and whose key starts with FallbackPrefix (an ISO 8583 reversal
// that carries its own RRN and, in DE90, the original's identity). It never
// enters the digest: it is a way to look, not part of what the record is.
type Link struct {
	Reference      string
	ByAlt          bool
	KeyPrefix      string
	Suffix         string
	Fallback       string
	FallbackPrefix string
}

// Reader yields the records of one file in order. Next returns io.EOF after
// the last record, and only once every file-level check (control totals,
// trailing records) has passed. A *ParseError names one bad record; Next may
// be called again to continue past it, so that one pass can report every bad
// record. Any other error is final.
type Reader interface {
	Next() (Record, error)
}

// EOF is io.EOF, re-exported so that callers of a Reader need not import io
// only to compare with it.
var EOF = io.EOF

// Date returns the calendar date y-m-d at UTC midnight.
func Date(y int, m time.Month, d int) time.Time {
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// Digest is the SHA-256 of the record's economic content: its identity
// (Key, or Link for returns and reversals, whose key is only known once the
// original is found), amount, currency, direction, counterparty account and
// value date. File headers, line numbers, record order and descriptions never
// enter it, so a re-sent or re-ordered file yields the same digests.
func Digest(r *Record) [32]byte {
	h := sha256.New()
	field := func(s string) {
		h.Write([]byte(s))
		h.Write([]byte{0x1f})
	}
	field("v1")
	field(string(r.Kind))
	if r.Link != nil {
		field(r.Link.KeyPrefix)
		field(r.Link.Reference)
		field(strconv.FormatBool(r.Link.ByAlt))
		field(r.Link.Suffix)
	} else {
		field(r.Key)
	}
	field(strconv.FormatInt(r.Amount, 10))
	field(r.Currency)
	field(string(r.Direction))
	field(r.Account.ID)
	field(r.ValueDate.Format(time.DateOnly))
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// Check asserts the Record contract on what a format produced, so that a
// reader bug stops the file instead of reaching the ledger. It lives here,
// next to the fields it checks, so that every caller of a Reader (ingest and
// statement import alike) checks the same contract.
func Check(r *Record) error {
	bad := func(what string) error {
		return &ParseError{Line: r.Line, Offset: r.Offset, Err: fmt.Errorf("record %q: %s", r.Key, what)}
	}
	switch {
	case r.Key == "":
		return bad("no key")
	case len(r.Key) > 512:
		return bad("key longer than 512 bytes")
	case r.Amount < 0:
		return bad("negative amount")
	case r.Kind != Notice && r.Amount == 0:
		return bad("zero amount on a record that posts")
	case r.Amount > MaxAmountMinor:
		return &ParseError{Line: r.Line, Offset: r.Offset, Field: "amount",
			Err: fmt.Errorf("record %q: %w", r.Key, CheckAmount(r.Amount))}
	case len(r.Currency) != 3:
		return bad("currency is not a 3-letter ISO 4217 code")
	case r.Direction != Credit && r.Direction != Debit:
		return bad("direction is neither credit nor debit")
	case r.ValueDate.IsZero():
		return bad("no value date")
	case (r.SettleCurrency == "") != (r.SettleAmount == 0) && r.Kind != Notice:
		return bad("a settlement amount without its currency, or a currency without an amount")
	case r.SettleCurrency != "" && len(r.SettleCurrency) != 3:
		return bad("settlement currency is not a 3-letter ISO 4217 code")
	case r.SettleAmount < 0:
		return bad("negative settlement amount")
	case r.SettleAmount > MaxAmountMinor:
		return &ParseError{Line: r.Line, Offset: r.Offset, Field: "settlement amount",
			Err: fmt.Errorf("record %q: %w", r.Key, CheckAmount(r.SettleAmount))}
	}
	switch r.Kind {
	case Clearing, Notice:
	case Return, Reversal:
		if r.Link == nil || r.Link.Reference == "" || !strings.HasPrefix(r.Link.Suffix, ":") {
			return bad("return or reversal without a usable link to its original")
		}
	default:
		return bad(fmt.Sprintf("unknown kind %q", r.Kind))
	}
	return nil
}
