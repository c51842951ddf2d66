package iso8583

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/moov-io/iso8583"
)

// Message is one message as the exact values of its data elements, for
// writing test and benchmark files. Values are written as given, with the
// spec's length prefixes and encodings but no padding, so a fixed-length
// field needs a value of its full length ("000000001000" for DE4).
type Message struct {
	MTI    string
	Fields map[int]string
}

// Pack encodes m with the exact twin of spec, through a moov-io/iso8583
// message value.
func (m Message) Pack(spec *Spec) ([]byte, error) {
	msg := iso8583.NewMessage(spec.ExactSpec())
	msg.MTI(m.MTI)
	ids := make([]int, 0, len(m.Fields))
	for id := range m.Fields {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		if err := msg.Field(id, m.Fields[id]); err != nil {
			return nil, fmt.Errorf("iso8583: DE%d: %w", id, err)
		}
	}
	b, err := msg.Pack()
	if err != nil {
		return nil, fmt.Errorf("iso8583: packing MTI %s: %w", m.MTI, err)
	}
	return b, nil
}

// Original is what a reversal's DE90 says of the message it reverses.
type Original struct {
	MTI         string
	STAN        string
	Transmitted time.Time
	Acquirer    string // up to 11 digits; zero-filled on the wire
}

// Txn describes a card message by the data elements the reader interprets.
// Empty strings and zero times leave their data element out; DE4 is always
// written.
type Txn struct {
	MTI            string
	PAN            string    // DE2
	ProcessingCode string    // DE3, six digits
	Amount         int64     // DE4, in minor units
	Transmitted    time.Time // DE7, and DE12 and DE13 as its local time and date
	STAN           string    // DE11, six digits
	Settlement     time.Time // DE15
	Acquirer       string    // DE32
	RRN            string    // DE37, twelve characters
	Currency       string    // DE49, the ISO 4217 numeric code
	Original       *Original // DE90
	Actual         *int64    // DE95: the actual amount of a partial reversal
	// Extra sets other data elements, as exact values; it wins over the
	// fields above.
	Extra map[int]string
}

// Message returns t as exact data element values.
func (t Txn) Message() Message {
	f := map[int]string{fieldAmount: fmt.Sprintf("%012d", t.Amount)}
	set := func(id int, v string) {
		if v != "" {
			f[id] = v
		}
	}
	set(fieldPAN, t.PAN)
	set(fieldProcessingCode, t.ProcessingCode)
	if !t.Transmitted.IsZero() {
		u := t.Transmitted.UTC()
		f[fieldTransmission] = u.Format("0102150405")
		f[fieldLocalTime] = u.Format("150405")
		f[fieldLocalDate] = u.Format("0102")
	}
	set(fieldSTAN, t.STAN)
	if !t.Settlement.IsZero() {
		f[fieldSettlementDate] = t.Settlement.UTC().Format("0102")
	}
	set(fieldAcquirer, t.Acquirer)
	set(fieldRRN, t.RRN)
	set(fieldCurrency, t.Currency)
	if o := t.Original; o != nil {
		f[fieldOriginal] = o.MTI + o.STAN + o.Transmitted.UTC().Format("0102150405") + acquirer11(o.Acquirer) + "00000000000"
	}
	if t.Actual != nil {
		f[fieldReplacement] = fmt.Sprintf("%012d%012d%s%s", *t.Actual, 0, "C00000000", "C00000000")
	}
	for id, v := range t.Extra {
		f[id] = v
	}
	return Message{MTI: t.MTI, Fields: f}
}

// Writer writes messages in one framing.
type Writer struct {
	w       *bufio.Writer
	framing string
	spec    *Spec
	n       int64
	hexbuf  []byte
}

// NewWriter returns a Writer of framed messages to w. Call Flush when done.
func NewWriter(w io.Writer, framing string, spec *Spec) (*Writer, error) {
	if !knownFraming(framing) {
		return nil, fmt.Errorf("%w: unknown framing %q", ErrOptions, framing)
	}
	if spec == nil {
		return nil, fmt.Errorf("%w: no spec", ErrOptions)
	}
	return &Writer{w: bufio.NewWriterSize(w, 64<<10), framing: framing, spec: spec}, nil
}

// Write packs m with the Writer's spec and writes it.
func (w *Writer) Write(m Message) error {
	b, err := m.Pack(w.spec)
	if err != nil {
		return err
	}
	return w.WritePacked(b)
}

// WriteMoov packs a moov-io/iso8583 message value and writes it.
func (w *Writer) WriteMoov(m *iso8583.Message) error {
	b, err := m.Pack()
	if err != nil {
		return fmt.Errorf("iso8583: packing: %w", err)
	}
	return w.WritePacked(b)
}

// WritePacked frames and writes bytes as they are, to build files whose
// messages no spec would pack.
func (w *Writer) WritePacked(b []byte) error {
	if w.framing == FramingRaw && w.n > 0 {
		return ErrRawHoldsOne
	}
	w.n++
	var hdr [4]byte
	switch w.framing {
	case FramingRDW:
		if uint64(len(b)) > 1<<32-1 {
			return fmt.Errorf("iso8583: a message of %d bytes does not fit an RDW", len(b))
		}
		binary.BigEndian.PutUint32(hdr[:], uint32(len(b)))
		w.w.Write(hdr[:4])
	case FramingLen2:
		if len(b) > 1<<16-1 {
			return fmt.Errorf("iso8583: a message of %d bytes does not fit a 2-byte length", len(b))
		}
		binary.BigEndian.PutUint16(hdr[:], uint16(len(b)))
		w.w.Write(hdr[:2])
	case FramingASCII4:
		if len(b) > 9999 {
			return fmt.Errorf("iso8583: a message of %d bytes does not fit 4 length digits", len(b))
		}
		fmt.Fprintf(w.w, "%04d", len(b))
	case FramingHex:
		w.hexbuf = hex.AppendEncode(w.hexbuf[:0], b)
		for i, c := range w.hexbuf {
			if c >= 'a' {
				w.hexbuf[i] = c - 'a' + 'A'
			}
		}
		w.hexbuf = append(w.hexbuf, '\n')
		_, err := w.w.Write(w.hexbuf)
		return err
	}
	_, err := w.w.Write(b)
	return err
}

// Flush writes out what the Writer buffers.
func (w *Writer) Flush() error { return w.w.Flush() }
