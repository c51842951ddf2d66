package iso8583

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/moov-io/iso8583"
	"github.com/moov-io/iso8583/encoding"
	"github.com/moov-io/iso8583/field"
	"github.com/moov-io/iso8583/padding"
	"github.com/moov-io/iso8583/prefix"
	moovsort "github.com/moov-io/iso8583/sort"
)

// This file reads the JSON spec format of moov-io/iso8583's specs package
// (specs.ImportJSON). That package cannot be imported here because it pulls
// in a YAML module that go.mod does not carry, so its import half is
// rewritten below with the same names and meanings. It is stricter than the
// original where the original guesses: an unknown key, padding type or
// multi-character pad is an error instead of being silently ignored, since
// a spec that is quietly wrong decodes garbage.

type jsonSpec struct {
	Name   string                `json:"name"`
	Fields map[string]*jsonField `json:"fields"`
}

type jsonField struct {
	Type              string                `json:"type"`
	Length            int                   `json:"length"`
	Description       string                `json:"description"`
	Enc               string                `json:"enc"`
	Prefix            string                `json:"prefix"`
	Padding           *jsonPadding          `json:"padding"`
	Tag               *jsonTag              `json:"tag"`
	Subfields         map[string]*jsonField `json:"subfields"`
	Bitmap            *jsonField            `json:"bitmap"`
	DisableAutoExpand bool                  `json:"disableAutoExpand"`
}

type jsonPadding struct {
	Type string `json:"type"`
	Pad  string `json:"pad"`
}

type jsonTag struct {
	Length              int          `json:"length"`
	Enc                 string       `json:"enc"`
	Padding             *jsonPadding `json:"padding"`
	Sort                string       `json:"sort"`
	SkipUnknownTLVTags  bool         `json:"skipUnknownTLVTags"`
	StoreUnknownTLVTags bool         `json:"storeUnknownTLVTags"`
	PrefUnknownTLV      string       `json:"prefUnknownTLV"`
}

var fieldConstructors = map[string]func(*field.Spec) field.Field{
	"String":    func(s *field.Spec) field.Field { return field.NewString(s) },
	"Numeric":   func(s *field.Spec) field.Field { return field.NewNumeric(s) },
	"Binary":    func(s *field.Spec) field.Field { return field.NewBinary(s) },
	"Hex":       func(s *field.Spec) field.Field { return field.NewHex(s) },
	"Bitmap":    func(s *field.Spec) field.Field { return field.NewBitmap(s) },
	"Composite": func(s *field.Spec) field.Field { return field.NewComposite(s) },
	"Track1":    func(s *field.Spec) field.Field { return field.NewTrack1(s) },
	"Track2":    func(s *field.Spec) field.Field { return field.NewTrack2(s) },
	"Track3":    func(s *field.Spec) field.Field { return field.NewTrack3(s) },
}

var encodings = map[string]encoding.Encoder{
	"ASCII":      encoding.ASCII,
	"BCD":        encoding.BCD,
	"EBCDIC":     encoding.EBCDIC,
	"EBCDIC1047": encoding.EBCDIC1047,
	"Binary":     encoding.Binary,
	"HexToASCII": encoding.BytesToASCIIHex,
	"ASCIIToHex": encoding.ASCIIHexToBytes,
	"LBCD":       encoding.LBCD,
	"BerTLVTag":  encoding.BerTLVTag,
}

var sorts = map[string]moovsort.StringSlice{
	"StringsByInt": moovsort.StringsByInt,
	"StringsByHex": moovsort.StringsByHex,
}

// prefixers maps every prefixer's own name ("ASCII.LL", "Hex.Fixed") to it,
// which is the name the JSON format uses.
var prefixers = func() map[string]prefix.Prefixer {
	m := map[string]prefix.Prefixer{prefix.BerTLV.Inspect(): prefix.BerTLV}
	for _, set := range []prefix.Prefixers{prefix.None, prefix.ASCII, prefix.BCD, prefix.Hex,
		prefix.EBCDIC, prefix.EBCDIC1047, prefix.Binary} {
		for _, p := range []prefix.Prefixer{set.Fixed, set.L, set.LL, set.LLL, set.LLLL, set.LLLLL, set.LLLLLL} {
			if p != nil {
				m[p.Inspect()] = p
			}
		}
	}
	return m
}()

// parseSpecJSON builds a MessageSpec from moov's JSON spec format.
func parseSpecJSON(data []byte) (*iso8583.MessageSpec, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var js jsonSpec
	if err := dec.Decode(&js); err != nil {
		return nil, fmt.Errorf("%w: not a moov-io/iso8583 JSON spec: %v", ErrSpec, err)
	}
	if len(js.Fields) == 0 {
		return nil, fmt.Errorf("%w: the spec defines no fields", ErrSpec)
	}
	ms := &iso8583.MessageSpec{Name: js.Name, Fields: make(map[int]field.Field, len(js.Fields))}
	for key, jf := range js.Fields {
		id, err := strconv.Atoi(key)
		if err != nil || id < 0 || id > 192 {
			return nil, fmt.Errorf("%w: field key %q is not a field number from 0 to 192", ErrSpec, key)
		}
		f, err := buildField(jf)
		if err != nil {
			return nil, fmt.Errorf("%w: field %d: %v", ErrSpec, id, err)
		}
		ms.Fields[id] = f
	}
	return ms, nil
}

func buildField(jf *jsonField) (field.Field, error) {
	if jf == nil {
		return nil, fmt.Errorf("empty definition")
	}
	construct, ok := fieldConstructors[jf.Type]
	if !ok {
		return nil, fmt.Errorf("unknown type %q", jf.Type)
	}
	sp, err := buildFieldSpec(jf)
	if err != nil {
		return nil, err
	}
	if jf.Type == "Composite" {
		// NewComposite panics on an invalid spec; say why instead.
		if err := sp.Validate(); err != nil {
			return nil, err
		}
	}
	return construct(sp), nil
}

func buildFieldSpec(jf *jsonField) (*field.Spec, error) {
	if jf.Length < 0 {
		return nil, fmt.Errorf("negative length %d", jf.Length)
	}
	sp := &field.Spec{Length: jf.Length, Description: jf.Description, DisableAutoExpand: jf.DisableAutoExpand}
	var ok bool
	if sp.Pref, ok = prefixers[jf.Prefix]; !ok {
		return nil, fmt.Errorf("unknown prefix %q", jf.Prefix)
	}
	if jf.Padding != nil {
		pad, err := buildPadding(jf.Padding)
		if err != nil {
			return nil, err
		}
		sp.Pad = pad
	}
	if len(jf.Subfields) == 0 {
		if sp.Enc, ok = encodings[jf.Enc]; !ok {
			return nil, fmt.Errorf("unknown encoding %q", jf.Enc)
		}
		return sp, nil
	}
	sp.Subfields = make(map[string]field.Field, len(jf.Subfields))
	for key, sub := range jf.Subfields {
		f, err := buildField(sub)
		if err != nil {
			return nil, fmt.Errorf("subfield %s: %w", key, err)
		}
		sp.Subfields[key] = f
	}
	if jf.Tag != nil {
		tag, err := buildTag(jf.Tag)
		if err != nil {
			return nil, err
		}
		sp.Tag = tag
	}
	if jf.Bitmap != nil {
		bsp, err := buildFieldSpec(jf.Bitmap)
		if err != nil {
			return nil, fmt.Errorf("bitmap: %w", err)
		}
		sp.Bitmap = field.NewBitmap(bsp)
	}
	return sp, nil
}

func buildTag(jt *jsonTag) (*field.TagSpec, error) {
	tag := &field.TagSpec{
		Length:              jt.Length,
		SkipUnknownTLVTags:  jt.SkipUnknownTLVTags,
		StoreUnknownTLVTags: jt.StoreUnknownTLVTags,
	}
	if jt.Enc != "" {
		enc, ok := encodings[jt.Enc]
		if !ok {
			return nil, fmt.Errorf("tag: unknown encoding %q", jt.Enc)
		}
		tag.Enc = enc
	}
	if jt.Padding != nil {
		pad, err := buildPadding(jt.Padding)
		if err != nil {
			return nil, fmt.Errorf("tag: %w", err)
		}
		tag.Pad = pad
	}
	var ok bool
	if tag.Sort, ok = sorts[jt.Sort]; !ok {
		return nil, fmt.Errorf("tag: unknown sort %q", jt.Sort)
	}
	if jt.PrefUnknownTLV != "" {
		if tag.PrefUnknownTLV, ok = prefixers[jt.PrefUnknownTLV]; !ok {
			return nil, fmt.Errorf("tag: unknown prefix %q", jt.PrefUnknownTLV)
		}
	}
	return tag, nil
}

func buildPadding(jp *jsonPadding) (padding.Padder, error) {
	if jp.Type == "None" {
		return padding.None, nil
	}
	r, size := utf8.DecodeRuneInString(jp.Pad)
	if size == 0 || size != len(jp.Pad) || r == utf8.RuneError {
		return nil, fmt.Errorf("padding %q: the pad must be exactly one character", jp.Pad)
	}
	switch jp.Type {
	case "Left":
		return padding.Left(r), nil
	case "Right":
		return padding.Right(r), nil
	}
	return nil, fmt.Errorf("unknown padding type %q", jp.Type)
}
