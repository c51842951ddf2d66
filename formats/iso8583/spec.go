package iso8583

import (
	"fmt"
	"io"
	"maps"
	"os"

	"github.com/moov-io/iso8583"
	"github.com/moov-io/iso8583/encoding"
	"github.com/moov-io/iso8583/field"
	"github.com/moov-io/iso8583/padding"
	"github.com/moov-io/iso8583/prefix"
)

// The built-in spec names that Options.Spec and LoadSpec accept besides a
// path to a JSON spec.
const (
	// SpecName87 is moov-io/iso8583's root iso8583.Spec87: ISO 8583:1987
	// in ASCII with a 64-bit primary bitmap in hex and a secondary bitmap
	// when bit 1 is set, as the standard and the real messages of the
	// shared corpus lay it out.
	SpecName87 = "spec87"
	// SpecName87ASCII is moov-io/iso8583's specs.Spec87ASCII: the same
	// fields, but the first bitmap is always 128 bits (32 hex digits), and
	// the processing code is zero-padded.
	SpecName87ASCII = "spec87ascii"
	// DefaultSpec is the spec used when none is named. It is SpecName87
	// because its bitmap layout is the standard one; see
	// docs/decisions/iso8583-specs.md.
	DefaultSpec = SpecName87
)

// maxSpecBytes bounds the size of a JSON spec file.
const maxSpecBytes = 4 << 20

// Spec is a message layout to decode and encode with. It holds the
// moov-io/iso8583 MessageSpec as loaded and an exact twin of it, in which
// every String and Numeric field keeps its bytes as they are on the wire:
// no padding is stripped and nothing is turned into a number, so leading
// zeros survive ("000000" stays "000000", not "0").
type Spec struct {
	name  string
	moov  *iso8583.MessageSpec
	exact *iso8583.MessageSpec
}

// Name is the built-in name or the path the spec was loaded from.
func (s *Spec) Name() string { return s.name }

// MessageSpec returns the moov-io/iso8583 spec as loaded. Its Numeric
// fields strip leading zeros and its padded fields strip their padding when
// unpacking; use ExactSpec to build messages whose values are written
// exactly as given.
func (s *Spec) MessageSpec() *iso8583.MessageSpec { return s.moov }

// ExactSpec returns the twin of MessageSpec in which String and Numeric
// fields are plain unpadded strings. A message packed with it is
// byte-for-byte what MessageSpec packs when every value already has its
// field's full length, and it can also carry values that MessageSpec
// cannot (a processing code of "000000" under Spec87, say).
func (s *Spec) ExactSpec() *iso8583.MessageSpec { return s.exact }

// LoadSpec returns a built-in spec by name (SpecName87, SpecName87ASCII;
// "" is DefaultSpec) or loads a moov-io/iso8583 JSON spec from a path.
func LoadSpec(nameOrPath string) (*Spec, error) {
	var ms *iso8583.MessageSpec
	switch nameOrPath {
	case "", SpecName87:
		nameOrPath, ms = SpecName87, builtinSpec87()
	case SpecName87ASCII:
		ms = builtinSpec87ASCII()
	default:
		var err error
		if ms, err = loadSpecFile(nameOrPath); err != nil {
			return nil, err
		}
	}
	return newSpec(nameOrPath, ms)
}

func loadSpecFile(path string) (*iso8583.MessageSpec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %q is neither a built-in spec (%s, %s) nor a readable file: %v",
			ErrSpec, path, SpecName87, SpecName87ASCII, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSpecBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrSpec, path, err)
	}
	if len(data) > maxSpecBytes {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrSpec, path, maxSpecBytes)
	}
	ms, err := parseSpecJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ms, nil
}

// newSpec checks that ms gives the reader what it needs and builds the
// exact twin.
func newSpec(name string, ms *iso8583.MessageSpec) (*Spec, error) {
	if err := ms.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrSpec, name, err)
	}
	if !isText(ms.Fields[0]) {
		return nil, fmt.Errorf("%w: %s: the MTI (field 0) must be a String or Numeric field", ErrSpec, name)
	}
	for _, id := range usedFields {
		f, ok := ms.Fields[id]
		if !ok || isText(f) {
			continue
		}
		if _, track := f.(*field.Track2); track && id == fieldTrack2 {
			continue
		}
		return nil, fmt.Errorf("%w: %s: field %d is a %T; the reader needs it as a String or Numeric field",
			ErrSpec, name, id, f)
	}
	return &Spec{name: name, moov: ms, exact: exactTwin(ms)}, nil
}

func isText(f field.Field) bool {
	switch f.(type) {
	case *field.String, *field.Numeric:
		return true
	}
	return false
}

// exactTwin copies ms with every String and Numeric field replaced by an
// unpadded String of the same length, prefix and encoding. Both read the
// same bytes, so decoding with the twin consumes a message exactly as ms
// would, and yields the digits as sent.
func exactTwin(ms *iso8583.MessageSpec) *iso8583.MessageSpec {
	fields := make(map[int]field.Field, len(ms.Fields))
	for id, f := range ms.Fields {
		if isText(f) {
			sp := *f.Spec()
			sp.Pad = nil
			fields[id] = field.NewString(&sp)
			continue
		}
		fields[id] = f
	}
	return &iso8583.MessageSpec{Name: ms.Name, Fields: fields}
}

// builtinSpec87 is moov's iso8583.Spec87 with the data elements 65 to 128
// that it leaves out added as ISO 8583:1987 defines them; without DE95 a
// partial reversal would not decode at all.
func builtinSpec87() *iso8583.MessageSpec {
	fields := maps.Clone(iso8583.Spec87.Fields)
	addFields87(fields)
	return &iso8583.MessageSpec{Name: iso8583.Spec87.Name, Fields: fields}
}

// builtinSpec87ASCII rebuilds moov's specs.Spec87ASCII from Spec87, from
// which it differs in three places: a 16-byte first bitmap, a zero-padded
// processing code and no DE70 (which addFields87 then adds back as the
// standard defines it). The specs package itself cannot be imported: it
// pulls in a YAML module that go.mod does not carry. The corpus test
// compares the result with moov's own spec87ascii.json field by field.
func builtinSpec87ASCII() *iso8583.MessageSpec {
	fields := maps.Clone(iso8583.Spec87.Fields)
	fields[1] = field.NewBitmap(&field.Spec{
		Length:      16,
		Description: "Bitmap",
		Enc:         encoding.BytesToASCIIHex,
		Pref:        prefix.Hex.Fixed,
	})
	fields[3] = field.NewNumeric(&field.Spec{
		Length:      6,
		Description: "Processing Code",
		Enc:         encoding.ASCII,
		Pref:        prefix.ASCII.Fixed,
		Pad:         padding.Left('0'),
	})
	delete(fields, 70)
	addFields87(fields)
	return &iso8583.MessageSpec{Name: iso8583.Spec87.Name, Fields: fields}
}
