package csv

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/clearing-dev/clearing/internal/money"
)

// ErrGenerate means generator options that cannot produce a file.
var ErrGenerate = errors.New("csv: invalid generator options")

// GenerateOptions describe a generated export in the shape of one preset.
// Every row is a pure function of Seed and the row's index, so a file of any
// size streams in constant memory, and the same options always give the same
// bytes.
//
// A corrected re-upload of a file generated with Rows = N is the same Seed
// and Rows with NewRows > 0 (rows N and on are new), Shuffle for another
// order, and ChangeAmount for rows whose amount was corrected.
type GenerateOptions struct {
	Preset string // "signed-amount", "debit-credit" or "direction"
	Rows   int    // rows of the original file
	Seed   int64
	// BOM starts the file with a UTF-8 byte order mark; CRLF ends lines
	// with "\r\n".
	BOM, CRLF bool
	// QuoteAll quotes every field, and gives some descriptions a doubled
	// quote and a line break, so that rows span lines. Without it only fields
	// that need quotes have them.
	QuoteAll bool
	// SubtotalEvery writes a subtotal (or balance) row, which the preset
	// skips, after every N rows; 0 writes none.
	SubtotalEvery int
	// PendingEvery marks every Nth row Pending, which the direction preset
	// skips; 0 marks none.
	PendingEvery int
	// Currencies are cycled through by row; nil means USD.
	Currencies   []string
	NewRows      int   // rows added after the original Rows
	Shuffle      bool  // write the rows in a seeded order
	ChangeAmount []int // 0-based rows whose amount is one minor unit higher
	// Start, when set, dates the rows from Start over Days days (1 when
	// zero); the zero value dates them over November 2026, the 1st to the
	// 28th.
	Start time.Time
	Days  int
	// IDStart numbers the rows' ids from it instead of 0, so that the next
	// file of the same seed shares no id with the last one.
	IDStart int
}

// GenerateStats counts what Generate wrote.
type GenerateStats struct {
	Rows    int64 // rows that the preset reads as records
	Skipped int64 // subtotal, balance and pending rows
	Bytes   int64
}

// shape writes the rows of one preset's export.
type shape struct {
	header []string
	comma  byte
	row    func(g *generator, i int, fields []string)
	total  func(g *generator, fields []string)
}

var shapes = map[string]shape{
	"signed-amount": {
		header: []string{"id", "created", "type", "amount", "currency", "merchant_id", "description"},
		comma:  ',', row: signedRow, total: signedTotal,
	},
	"debit-credit": {
		header: []string{"Value Date", "Type", "Reference", "Description", "Debit", "Credit", "Currency", "Sort Code", "Account Number"},
		comma:  ',', row: bankRow, total: bankTotal,
	},
	"direction": {
		header: []string{"transaction_id", "settlement_date", "kind", "amount", "currency", "account", "status"},
		comma:  '|', row: directionRow, total: directionTotal,
	},
}

// generator holds the state of one Generate call.
type generator struct {
	opts       GenerateOptions
	shape      shape
	currencies []money.Currency
	changed    map[int]bool
	groupSum   int64 // minor units of the rows since the last subtotal
	w          *bufio.Writer
	n          int64
}

// Generate writes a deterministic export in the shape of opts.Preset.
func Generate(w io.Writer, opts GenerateOptions) (GenerateStats, error) {
	g, err := newGenerator(w, opts)
	if err != nil {
		return GenerateStats{}, err
	}
	var st GenerateStats
	if opts.BOM {
		g.w.Write(utf8BOM)
	}
	g.writeRow(g.shape.header)
	total := opts.Rows + opts.NewRows
	fields := make([]string, len(g.shape.header))
	perm := newPermutation(total, opts.Seed, opts.Shuffle)
	for p := range total {
		i := perm.at(p)
		g.shape.row(g, i, fields)
		g.writeRow(fields)
		if g.pending(i) {
			st.Skipped++
		} else {
			st.Rows++
		}
		if opts.SubtotalEvery > 0 && (p+1)%opts.SubtotalEvery == 0 {
			g.shape.total(g, fields)
			g.writeRow(fields)
			g.groupSum = 0
			st.Skipped++
		}
	}
	if err := g.w.Flush(); err != nil {
		return st, err
	}
	st.Bytes = g.n + int64(g.w.Buffered())
	return st, nil
}

func newGenerator(w io.Writer, opts GenerateOptions) (*generator, error) {
	sh, ok := shapes[opts.Preset]
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: no shape %q; the shapes are debit-credit, direction and signed-amount", ErrGenerate, opts.Preset)
	case opts.Rows < 0 || opts.NewRows < 0 || opts.Rows+opts.NewRows > formatsMaxRows:
		return nil, fmt.Errorf("%w: rows must be between 0 and %d", ErrGenerate, formatsMaxRows)
	case opts.PendingEvery > 0 && opts.Preset != "direction":
		return nil, fmt.Errorf("%w: only the direction shape has pending rows", ErrGenerate)
	case opts.Days < 0 || opts.IDStart < 0:
		return nil, fmt.Errorf("%w: Days and IDStart cannot be negative", ErrGenerate)
	case opts.SubtotalEvery < 0 || opts.PendingEvery < 0:
		return nil, fmt.Errorf("%w: SubtotalEvery and PendingEvery cannot be negative", ErrGenerate)
	}
	g := &generator{opts: opts, shape: sh, changed: map[int]bool{}}
	g.w = bufio.NewWriterSize(countWriter{w, &g.n}, 64<<10)
	codes := opts.Currencies
	if len(codes) == 0 {
		codes = []string{"USD"}
	}
	for _, code := range codes {
		c, err := money.LookupCurrency(code)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrGenerate, err)
		}
		g.currencies = append(g.currencies, c)
	}
	for _, i := range opts.ChangeAmount {
		g.changed[i] = true
	}
	return g, nil
}

// formatsMaxRows keeps a generated file within the reader's default
// MaxRecords.
const formatsMaxRows = 50_000_000

// countWriter counts the bytes that reach the underlying writer.
type countWriter struct {
	w io.Writer
	n *int64
}

func (c countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	*c.n += int64(n)
	return n, err
}

// writeRow writes one row, quoting a field when QuoteAll is set or when the
// field holds the delimiter, a quote or a line break.
func (g *generator) writeRow(fields []string) {
	for i, f := range fields {
		if i > 0 {
			g.w.WriteByte(g.shape.comma)
		}
		if g.opts.QuoteAll || strings.ContainsAny(f, "\"\r\n"+string(g.shape.comma)) {
			g.w.WriteByte('"')
			g.w.WriteString(strings.ReplaceAll(f, `"`, `""`))
			g.w.WriteByte('"')
		} else {
			g.w.WriteString(f)
		}
	}
	if g.opts.CRLF {
		g.w.WriteString("\r\n")
	} else {
		g.w.WriteByte('\n')
	}
}

// hash is SplitMix64 of the seed and row index, the source of every
// generated value.
func (g *generator) hash(i int, salt uint64) uint64 {
	z := uint64(g.opts.Seed) ^ uint64(i)*0x9E3779B97F4A7C15 ^ salt*0xD1B54A32D192ED03
	z += 0x9E3779B97F4A7C15
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

// amount is row i's amount in minor units: mostly small, sometimes in the
// thousands of major units so that thousands separators appear.
func (g *generator) amount(i int) int64 {
	a := int64(g.hash(i, 1)%100_000) + 1
	if g.hash(i, 2)%10 == 0 {
		a *= 1000
	}
	if g.changed[i] {
		a++
	}
	return a
}

func (g *generator) currency(i int) money.Currency {
	return g.currencies[g.hash(i, 3)%uint64(len(g.currencies))]
}

func (g *generator) date(i int) string {
	if !g.opts.Start.IsZero() {
		return g.opts.Start.AddDate(0, 0, int(g.hash(i, 4)%uint64(max(g.opts.Days, 1)))).Format(time.DateOnly)
	}
	return fmt.Sprintf("2026-11-%02d", 1+g.hash(i, 4)%28)
}

func (g *generator) digits(i int, salt uint64, n int) string {
	s := strconv.FormatUint(g.hash(i, salt), 10)
	for len(s) < n {
		s = "0" + s
	}
	return s[len(s)-n:]
}

func (g *generator) id(i int) string {
	return fmt.Sprintf("%x%07d", uint32(g.opts.Seed), g.opts.IDStart+i)
}

func (g *generator) pending(i int) bool {
	return g.opts.PendingEvery > 0 && (i+1)%g.opts.PendingEvery == 0
}

// description is free text; with QuoteAll it carries a delimiter, a doubled
// quote and, in every seventh row, a line break.
func (g *generator) description(i int) string {
	switch {
	case g.opts.QuoteAll && i%7 == 0:
		return fmt.Sprintf("Order \"%d\"\nsecond line", i)
	case g.opts.QuoteAll:
		return fmt.Sprintf("Order \"%d\", shipped", i)
	case i%3 == 0:
		return fmt.Sprintf("Order %d, shipped", i)
	}
	return fmt.Sprintf("Order %d", i)
}
