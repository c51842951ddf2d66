package iso8583

import (
	"fmt"
	"io"
	"math/rand/v2"
	"time"
)

// GenerateOptions describe a generated file.
type GenerateOptions struct {
	// Seed decides every byte: the same options give the same file.
	Seed uint64
	// Messages is the number of messages to write.
	Messages int
	// Framing is one of the Framing constants.
	Framing string
	// Spec names the spec to pack with, as Options.Spec does.
	Spec string
	// Start is the transmission time of the first message. Zero means
	// 2026-11-28 22:00 UTC, fixed so that the seed alone decides the file.
	// Each message is sent 0 to 199 ms after the one before, so a million
	// messages span about a day.
	Start time.Time
	// RRNStart is the retrieval reference number of the first message, and
	// each message after it takes the next; zero derives them from Seed
	// (Seed modulo 10,000 times 10^8, plus one). The STAN is the RRN's last
	// six digits. A key is the acquirer, the RRN and the MTI, or for a
	// reversal without an RRN its original's STAN and transmission time, so
	// the next file of a day starts where the last one ended.
	RRNStart int64
}

// maxRRN is the largest RRN that DE37's twelve digits hold.
const maxRRN = 999_999_999_999

// GenerateSummary counts what a generated file holds, as the reader will
// return it.
type GenerateSummary struct {
	Messages  int64
	Clearing  int64 // financial messages that post: 0200, 0220, and 0201 repeats
	Notices   int64 // authorisations, and reversals of authorisations
	Reversals int64 // reversals of financial messages, orphans included
	Skipped   int64 // responses and network management messages
	Repeats   int64 // 0201 and 0401 repeats of a message earlier in the file
	Partial   int64 // partial reversals (DE95)
	ByAlt     int64 // reversals without an RRN, to be found through DE90
	Orphans   int64 // reversals whose original is not in the file
}

// Generate writes a deterministic file of card messages: financial
// requests and advices (0200, 0220), repeats (0201), authorisations
// (0100), reversals with and without an RRN, partial ones (DE95), repeats
// of reversals (0401), reversals of authorisations, a reversal whose
// original is absent now and then, responses (0210) and network management
// messages (0800). It streams: memory does not grow with Messages.
func Generate(w io.Writer, opts GenerateOptions) (GenerateSummary, error) {
	if opts.Messages < 0 {
		return GenerateSummary{}, fmt.Errorf("%w: a negative number of messages", ErrOptions)
	}
	if opts.Messages > 99_999_999 {
		return GenerateSummary{}, fmt.Errorf("%w: at most 99,999,999 messages have distinct RRNs", ErrOptions)
	}
	if opts.RRNStart < 0 || opts.RRNStart > 0 && opts.RRNStart+int64(opts.Messages)-1 > maxRRN {
		return GenerateSummary{}, fmt.Errorf("%w: RRNs from %d for %d messages pass %d", ErrOptions, opts.RRNStart, opts.Messages, int64(maxRRN))
	}
	spec, err := LoadSpec(opts.Spec)
	if err != nil {
		return GenerateSummary{}, err
	}
	out, err := NewWriter(w, opts.Framing, spec)
	if err != nil {
		return GenerateSummary{}, err
	}
	if opts.Framing == FramingRaw && opts.Messages != 1 {
		return GenerateSummary{}, fmt.Errorf("%w: the raw framing holds exactly one message", ErrOptions)
	}
	g := newGenerator(opts)
	for range opts.Messages {
		if err := out.Write(g.next()); err != nil {
			return g.sum, err
		}
	}
	return g.sum, out.Flush()
}

// ringSize bounds how many recent messages the generator remembers to
// repeat and reverse.
const ringSize = 256

type generator struct {
	rng     *rand.Rand
	rrnBase int64
	clock   time.Time
	seq     int64
	recent  []Txn // financial messages not yet reversed
	auths   []Txn
	pending *Txn // a repeat to write next
	sum     GenerateSummary
}

func newGenerator(opts GenerateOptions) *generator {
	start := opts.Start
	if start.IsZero() {
		start = time.Date(2026, 11, 28, 22, 0, 0, 0, time.UTC)
	}
	g := &generator{
		rng:     rand.New(rand.NewPCG(opts.Seed, 0x1508_3e1a_c0de)),
		rrnBase: int64(opts.Seed%10_000) * 100_000_000,
		clock:   start.UTC().Truncate(time.Second),
	}
	if opts.RRNStart > 0 {
		g.rrnBase = opts.RRNStart - 1 // the first message is seq 1
	}
	return g
}

// next returns the next message and counts it.
func (g *generator) next() Message {
	g.sum.Messages++
	g.seq++
	g.clock = g.clock.Add(time.Duration(g.rng.IntN(200)) * time.Millisecond)
	if p := g.pending; p != nil {
		g.pending = nil
		g.sum.Repeats++
		g.sum.Reversals++
		return p.Message()
	}
	if g.rng.IntN(1000) >= 950 {
		g.sum.Skipped++
		return Message{MTI: "0800", Fields: map[int]string{
			fieldTransmission: g.clock.Format("0102150405"), fieldSTAN: g.stan(), 70: "301"}}
	}
	return g.card().Message()
}

// card returns the next card message: anything but network management.
func (g *generator) card() Txn {
	switch r := g.rng.IntN(950); {
	case r < 550:
		return g.original("0200")
	case r < 650:
		return g.original("0220")
	case r < 700 && len(g.recent) > 0:
		return g.repeat()
	case r < 780:
		return g.authorisation()
	case r < 830 && len(g.recent) > 0:
		return g.reversal(r < 815)
	case r < 850 && len(g.recent) > 0:
		return g.partialReversal()
	case r < 860 && len(g.auths) > 0:
		return g.authReversal()
	case r < 870:
		return g.orphanReversal()
	case r >= 870 && len(g.recent) > 0:
		return g.response()
	}
	return g.original("0200")
}

// stan is the last six digits of the message's RRN: a file that starts its
// RRNs after another's (RRNStart) has other STANs too, and so shares no key
// with it through the reversals that carry no RRN (DE90).
func (g *generator) stan() string { return fmt.Sprintf("%06d", (g.rrnBase+g.seq)%1_000_000) }

var (
	genAcquirers = []string{"123456", "2000001", "00417"}
	genCodes     = []string{"000000", "000000", "000000", "000000", "000000", "000000", "200000", "010000", "090000"}
	genCurrency  = []string{"840", "840", "840", "840", "840", "840", "840", "978", "978", "392", "048"}
)

// base is a new message with fresh identifiers: STAN, RRN and times.
func (g *generator) base(mti string) Txn {
	return Txn{
		MTI:         mti,
		Transmitted: g.clock,
		STAN:        g.stan(),
		Settlement:  g.clock.AddDate(0, 0, 1),
		RRN:         fmt.Sprintf("%012d", g.rrnBase+g.seq),
		Extra:       map[int]string{41: "TERM0001", 42: "MERCHANT0000001"},
	}
}

// purchase is a new card message of a random kind, amount and currency.
func (g *generator) purchase(mti string) Txn {
	t := g.base(mti)
	t.PAN = g.pan()
	t.ProcessingCode = genCodes[g.rng.IntN(len(genCodes))]
	t.Amount = 1 + g.rng.Int64N(500_000)
	t.Acquirer = genAcquirers[g.rng.IntN(len(genAcquirers))]
	t.Currency = genCurrency[g.rng.IntN(len(genCurrency))]
	return t
}

// original is a new financial message, remembered to be repeated and
// reversed later.
func (g *generator) original(mti string) Txn {
	t := g.purchase(mti)
	g.remember(&g.recent, t)
	g.sum.Clearing++
	return t
}

func (g *generator) remember(ring *[]Txn, t Txn) {
	if len(*ring) < ringSize {
		*ring = append(*ring, t)
		return
	}
	(*ring)[g.rng.IntN(ringSize)] = t
}

// take removes and returns a random entry of ring.
func (g *generator) take(ring *[]Txn) Txn {
	r := *ring
	i := g.rng.IntN(len(r))
	t := r[i]
	r[i] = r[len(r)-1]
	*ring = r[:len(r)-1]
	return t
}

// pan is a 16-digit test card number in the 400000 range with a valid
// Luhn check digit.
func (g *generator) pan() string {
	d := []byte(fmt.Sprintf("400000%09d", g.rng.IntN(1_000_000_000)))
	sum := 0
	for i := len(d) - 1; i >= 0; i -= 2 {
		v := int(d[i]-'0') * 2
		sum += v/10 + v%10
		if i > 0 {
			sum += int(d[i-1] - '0')
		}
	}
	return string(d) + string(rune('0'+(10-sum%10)%10))
}

// repeat repeats a recent 0200 as a 0201.
func (g *generator) repeat() Txn {
	from := g.rng.IntN(len(g.recent))
	for i := range g.recent {
		if t := g.recent[(from+i)%len(g.recent)]; t.MTI == "0200" {
			t.MTI = "0201"
			g.sum.Clearing++
			g.sum.Repeats++
			return t
		}
	}
	return g.original("0200")
}

func (g *generator) authorisation() Txn {
	t := g.purchase("0100")
	g.sum.Notices++
	g.remember(&g.auths, t)
	return t
}

// reversalOf is a reversal of orig, with or without an RRN.
func (g *generator) reversalOf(orig Txn, mti string, withRRN bool) Txn {
	t := g.base(mti)
	t.PAN, t.ProcessingCode, t.Amount = orig.PAN, orig.ProcessingCode, orig.Amount
	t.Acquirer, t.Currency = orig.Acquirer, orig.Currency
	t.RRN = ""
	if withRRN {
		t.RRN = orig.RRN
	}
	t.Original = &Original{MTI: orig.MTI, STAN: orig.STAN, Transmitted: orig.Transmitted, Acquirer: orig.Acquirer}
	return t
}

// reversal reverses a recent financial message whole: a 0400 by RRN (half
// of them followed by their 0401 repeat), or a 0400 or 0420 without an RRN,
// through DE90 alone.
func (g *generator) reversal(byRRN bool) Txn {
	orig := g.take(&g.recent)
	g.sum.Reversals++
	if !byRRN {
		g.sum.ByAlt++
		return g.reversalOf(orig, []string{"0400", "0420"}[g.rng.IntN(2)], false)
	}
	t := g.reversalOf(orig, "0400", true)
	if g.rng.IntN(2) == 0 {
		t.Original = nil
	}
	if g.rng.IntN(2) == 0 {
		rep := t
		rep.MTI = "0401"
		g.pending = &rep
	}
	return t
}

func (g *generator) partialReversal() Txn {
	orig := g.take(&g.recent)
	if orig.Amount < 2 {
		g.remember(&g.recent, orig)
		return g.original("0200")
	}
	t := g.reversalOf(orig, "0400", true)
	actual := 1 + g.rng.Int64N(orig.Amount-1)
	t.Actual = &actual
	g.sum.Reversals++
	g.sum.Partial++
	return t
}

func (g *generator) authReversal() Txn {
	g.sum.Notices++
	return g.reversalOf(g.take(&g.auths), "0400", true)
}

// orphanReversal reverses a purchase that is not in the file: its RRN is
// the reversal's own fresh one.
func (g *generator) orphanReversal() Txn {
	t := g.purchase("0200")
	g.sum.Reversals++
	g.sum.Orphans++
	t.MTI = "0400"
	return t
}

// response answers a recent request (0210) or advice (0230).
func (g *generator) response() Txn {
	t := g.recent[g.rng.IntN(len(g.recent))]
	t.MTI = t.MTI[:2] + string(t.MTI[2]+1) + t.MTI[3:]
	t.Extra = map[int]string{39: "00", 41: "TERM0001", 42: "MERCHANT0000001"}
	g.sum.Skipped++
	return t
}
