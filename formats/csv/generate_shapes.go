package csv

import (
	"strconv"
	"strings"

	"github.com/clearing-dev/clearing/internal/money"
)

// signedRow: a processor export with a signed amount in major units.
func signedRow(g *generator, i int, f []string) {
	a, c := g.amount(i), g.currency(i)
	typ := "charge"
	switch g.hash(i, 5) % 10 {
	case 0:
		typ, a = "fee", -a
	case 1, 2:
		typ, a = "refund", -a
	}
	g.groupSum += a
	f[0], f[1], f[2] = "tx_"+g.id(i), g.date(i), typ
	f[3], f[4] = money.Format(a, c), c.Code
	f[5], f[6] = "acct_"+g.digits(i, 6, 8), g.description(i)
}

func signedTotal(g *generator, f []string) {
	clear(f)
	f[2], f[3], f[4] = "subtotal", money.Format(g.groupSum, g.currencies[0]), g.currencies[0].Code
}

// bankRow: a bank export with unsigned debit and credit columns, thousands
// grouped, and the counterparty account in two columns.
func bankRow(g *generator, i int, f []string) {
	a, c := g.amount(i), g.currency(i)
	clear(f)
	f[0], f[6], f[7], f[8] = g.date(i), c.Code, g.digits(i, 7, 6), g.digits(i, 8, 8)
	f[2], f[3] = "INV-"+g.id(i), g.description(i)
	switch g.hash(i, 5) % 10 {
	case 0:
		f[1], f[4] = "FEE", grouped(a, c)
		g.groupSum -= a
	case 1, 2, 3, 4:
		f[1], f[5] = "DD", grouped(a, c)
		g.groupSum += a
	default:
		f[1], f[4] = "TRF", grouped(a, c)
		g.groupSum -= a
	}
}

func bankTotal(g *generator, f []string) {
	clear(f)
	f[1], f[3], f[6] = "BAL", "Closing balance "+grouped(g.groupSum, g.currencies[0]), g.currencies[0].Code
}

// grouped formats minor units in major units with "," between thousands.
func grouped(minor int64, c money.Currency) string {
	s := money.Format(minor, c)
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	for k, d := range intPart {
		if k > 0 && (len(intPart)-k)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	if hasFrac {
		b.WriteString("." + frac)
	}
	return sign + b.String()
}

// directionRow: a card settlement report with an unsigned amount in minor
// units and a direction column.
func directionRow(g *generator, i int, f []string) {
	a, c := g.amount(i), g.currency(i)
	kind := "sale"
	if g.hash(i, 5)%5 == 0 {
		kind = "refund"
		g.groupSum -= a
	} else {
		g.groupSum += a
	}
	status := "Settled"
	if g.pending(i) {
		status = "Pending"
	}
	f[0], f[1], f[2] = "T"+g.id(i), g.date(i), kind
	f[3], f[4] = strconv.FormatInt(a, 10), c.Code
	f[5], f[6] = "4000"+g.digits(i, 9, 12), status
}

func directionTotal(g *generator, f []string) {
	clear(f)
	f[2], f[3] = "subtotal", strconv.FormatInt(g.groupSum, 10)
}

// permutation maps output positions to row indices: the identity, or an
// affine map p -> (a*p + b) mod n with a coprime to n, which shuffles
// without holding the order in memory.
type permutation struct {
	n, a, b uint64
}

func newPermutation(n int, seed int64, shuffle bool) permutation {
	if !shuffle || n < 2 {
		return permutation{n: uint64(n), a: 1}
	}
	a := uint64(seed)%uint64(n)*2 + 7919
	for gcd(a, uint64(n)) != 1 {
		a++
	}
	return permutation{n: uint64(n), a: a % uint64(n), b: uint64(seed) % uint64(n)}
}

// at returns the row index written at position pos. The product stays below
// 2^64 because the generator accepts at most 50 million rows.
func (p permutation) at(pos int) int {
	return int((p.a*uint64(pos) + p.b) % p.n)
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
