package ipm

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"time"
)

// GenerateOptions describe a generated IPM file.
type GenerateOptions struct {
	// Seed decides every byte: the same options give the same file.
	Seed uint64
	// Presentments is the number of first presentments per logical file.
	Presentments int
	// LogicalFiles is the number of header/trailer pairs; 0 means 1.
	LogicalFiles int
	// Blocked writes 1014-blocked VBS; otherwise plain VBS.
	Blocked bool
	// Encoding is EncodingCP500 (the default), EncodingCP037 or
	// EncodingLatin1.
	Encoding string
	// Lifecycle follows every seventh presentment with its reversal, and
	// every tenth one that is not reversed with a chargeback: full, and then
	// a full second presentment, or partial (half the amount), in turn. Each
	// logical file also gets one fee collection.
	Lifecycle bool
	// Day is the business day. Zero means 2026-11-02, fixed so that the
	// seed alone decides the file.
	Day time.Time
	// ARNStart is the sequence number (the 11 digits before the check
	// digit) of the first presentment's acquirer reference number; zero
	// means 1. The ARN carries the day, so files of two days never share
	// one; the next file of a day starts where the last one ended.
	ARNStart int64
	// FirstFile is the number of the first logical file, which its file id
	// (PDS 0105) and its fee collection's control number carry; zero means
	// 1. The next file of a day takes the next number.
	FirstFile int
}

// maxARNSequence is the largest sequence an ARN's 11 digits hold.
const maxARNSequence = 99_999_999_999

// GenerateSummary counts what a generated file holds, as the reader
// returns it.
type GenerateSummary struct {
	Messages      int64 // every record, headers and trailers included
	Presentments  int64 // first presentments that post (Clearing)
	Refunds       int64 // of which refunds (DE3 20)
	Chargebacks   int64
	Second        int64 // second presentments
	Reversals     int64
	Fees          int64
	Controls      int64 // headers and trailers
	LogicalFileID []string
}

// Generate writes a deterministic IPM file. It streams: memory does not
// grow with the number of messages.
func Generate(w io.Writer, opts GenerateOptions) (GenerateSummary, error) {
	if opts.Presentments < 0 || opts.LogicalFiles < 0 {
		return GenerateSummary{}, fmt.Errorf("%w: negative counts", ErrOptions)
	}
	if opts.FirstFile < 0 || max(opts.FirstFile, 1)+max(opts.LogicalFiles, 1)-1 > 99_999 {
		return GenerateSummary{}, fmt.Errorf("%w: logical files from %d pass 99,999", ErrOptions, opts.FirstFile)
	}
	if opts.ARNStart < 0 || opts.ARNStart > maxARNSequence {
		return GenerateSummary{}, fmt.Errorf("%w: ARN start %d is not a sequence from 1 to %d", ErrOptions, opts.ARNStart, int64(maxARNSequence))
	}
	if opts.LogicalFiles == 0 {
		opts.LogicalFiles = 1
	}
	if opts.Day.IsZero() {
		opts.Day = time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	}
	wr, err := NewWriter(w, opts.Blocked, opts.Encoding)
	if err != nil {
		return GenerateSummary{}, err
	}
	g := &generator{opts: opts, rnd: rand.New(rand.NewPCG(opts.Seed, 0x1f0)), wr: wr, seq: max(opts.ARNStart, 1) - 1}
	first := max(opts.FirstFile, 1)
	for f := first; f < first+opts.LogicalFiles && err == nil; f++ {
		err = g.logicalFile(f)
	}
	if err == nil {
		err = wr.Close()
	}
	return g.sum, err
}

type generator struct {
	opts  GenerateOptions
	rnd   *rand.Rand
	wr    *Writer
	sum   GenerateSummary
	seq   int64 // ARN sequence
	count int64 // messages in the current logical file
	total uint64
}

type currencyOf struct{ numeric, exp string }

var genCurrencies = []currencyOf{{"840", "2"}, {"840", "2"}, {"978", "2"}, {"392", "0"}}

func (g *generator) yymmdd() string { return g.opts.Day.Format("060102") }

func (g *generator) write(m Message) error {
	g.count++
	m.Fields[71] = fmt.Sprintf("%08d", g.count)
	if v, ok := m.Fields[4]; ok {
		n, _ := strconv.ParseUint(v, 10, 64)
		g.total = (g.total + n) % checkTotalMod
	}
	g.sum.Messages++
	return g.wr.Write(m)
}

func (g *generator) logicalFile(f int) error {
	g.count, g.total = 0, 0
	id := fmt.Sprintf("001%s00000013579%05d", g.yymmdd(), f)
	g.sum.LogicalFileID = append(g.sum.LogicalFileID, id)
	g.sum.Controls += 2
	if err := g.write(Message{MTI: "1644", Fields: map[int]string{24: "697"},
		PDS: []PDS{{"0105", id}, {"0122", "P"}}}); err != nil {
		return err
	}
	cbs := 0
	for i := 0; i < g.opts.Presentments; i++ {
		m, amt := g.presentment()
		if err := g.write(m); err != nil {
			return err
		}
		g.sum.Presentments++
		if m.Fields[3][:2] == "20" {
			g.sum.Refunds++
		}
		var err error
		switch {
		case !g.opts.Lifecycle:
		case i%7 == 6:
			err = g.reversal(m)
		case i%10 == 9:
			err = g.chargeback(m, amt, cbs)
			cbs++
		}
		if err != nil {
			return err
		}
	}
	if g.opts.Lifecycle {
		ctl := fmt.Sprintf("024680%s%08d", g.yymmdd(), f)
		if err := g.write(Message{MTI: "1740", Fields: map[int]string{3: "190000", 4: "000000005000", 24: "700",
			25: "7601", 49: "840", 93: "013579", 94: "024680"},
			PDS: []PDS{{"0137", ctl}, {"0148", "8402"}, {"0158", "MCC3050012  " + g.yymmdd() + "01    NNNNNN"}}}); err != nil {
			return err
		}
		g.sum.Fees++
	}
	// The trailer counts itself; it carries no DE4.
	return g.write(Message{MTI: "1644", Fields: map[int]string{24: "695"},
		PDS: []PDS{{"0105", id}, {"0301", fmt.Sprintf("%016d", g.total)}, {"0306", fmt.Sprintf("%08d", g.count+1)}}})
}

// reversal writes the reversal of presentment m: the same message with
// PDS0025.
func (g *generator) reversal(m Message) error {
	r := clone(m)
	r.PDS = append([]PDS{{"0025", "R" + g.yymmdd()}}, r.PDS...)
	g.sum.Reversals++
	return g.write(r)
}

// chargeback writes the k-th chargeback, of presentment m: full when k is
// even, and then followed by a full second presentment; half otherwise.
func (g *generator) chargeback(m Message, amount int64, k int) error {
	cb := clone(m)
	cb.MTI, cb.Fields[24], cb.Fields[25] = "1442", "450", "4837"
	if k%2 == 1 {
		cb.Fields[24] = "453"
		cb.Fields[4] = fmt.Sprintf("%012d", amount/2)
	}
	if err := g.write(cb); err != nil {
		return err
	}
	g.sum.Chargebacks++
	if k%2 == 1 {
		return nil
	}
	sp := clone(cb)
	sp.MTI, sp.Fields[24], sp.Fields[25] = "1240", "205", "2700"
	g.sum.Second++
	return g.write(sp)
}

func clone(m Message) Message {
	c := Message{MTI: m.MTI, Fields: make(map[int]string, len(m.Fields)), PDS: append([]PDS(nil), m.PDS...)}
	for k, v := range m.Fields {
		c.Fields[k] = v
	}
	return c
}

// presentment is a first presentment on a new ARN.
func (g *generator) presentment() (Message, int64) {
	g.seq++
	arn22 := fmt.Sprintf("0545454%s%011d", g.opts.Day.Format("6")+g.opts.Day.Format("002"), g.seq)
	arn := arn22 + string(luhnDigit(arn22))
	pan15 := fmt.Sprintf("555555%09d", g.rnd.IntN(1_000_000_000))
	pan := pan15 + string(luhnDigit(pan15))
	cur := genCurrencies[g.rnd.IntN(len(genCurrencies))]
	amt := int64(100 + g.rnd.IntN(99_900))
	proc := "000000"
	if g.rnd.IntN(10) == 0 {
		proc = "200000"
	}
	ird := fmt.Sprintf("%02d", 70+g.rnd.IntN(10))
	return Message{MTI: "1240", Fields: map[int]string{
		2: pan, 3: proc, 4: fmt.Sprintf("%012d", amt), 12: g.yymmdd() + "120000", 24: "200", 26: "5814", 31: arn,
		38: fmt.Sprintf("%06d", g.rnd.IntN(1_000_000)), 42: "GENMERCH001    ", 43: "GEN MERCHANT\\1 MAIN ST\\SPRINGFIELD\\62701     IL USA",
		49: cur.numeric, 63: " MCCGEN000" + g.opts.Day.Format("0102") + "  ", 93: "013579", 94: "024680",
	}, PDS: []PDS{{"0023", "POI"}, {"0148", cur.numeric + cur.exp},
		{"0158", "MCC4000840" + ird + g.yymmdd() + "01    NNNNNN"}, {"0165", "M"}}}, amt
}
