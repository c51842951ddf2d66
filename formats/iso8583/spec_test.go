package iso8583

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/moov-io/iso8583"
	"github.com/moov-io/iso8583/field"

	"github.com/clearing-dev/clearing/internal/corpus"
)

func TestLoadSpecBuiltins(t *testing.T) {
	for _, name := range []string{"", SpecName87, SpecName87ASCII} {
		t.Run(name, func(t *testing.T) {
			s, err := LoadSpec(name)
			if err != nil {
				t.Fatal(err)
			}
			if name == "" && s.Name() != DefaultSpec {
				t.Errorf("the default spec is %q", s.Name())
			}
			for _, id := range []int{fieldAmount, fieldOriginal, fieldReplacement, 128} {
				if s.MessageSpec().Fields[id] == nil || s.ExactSpec().Fields[id] == nil {
					t.Errorf("DE%d is missing", id)
				}
			}
			if _, ok := s.ExactSpec().Fields[fieldProcessingCode].(*field.String); !ok {
				t.Errorf("the exact twin's DE3 is a %T", s.ExactSpec().Fields[fieldProcessingCode])
			}
			if s.ExactSpec().Fields[fieldAmount].Spec().Pad != nil {
				t.Error("the exact twin's DE4 is padded")
			}
		})
	}
}

// TestSpec87KeepsMoovsFields guards the promise that spec87 is moov's
// Spec87 plus the data elements it lacks, and nothing else.
func TestSpec87KeepsMoovsFields(t *testing.T) {
	s, err := LoadSpec(SpecName87)
	if err != nil {
		t.Fatal(err)
	}
	for id, f := range iso8583.Spec87.Fields {
		if s.MessageSpec().Fields[id] != f {
			t.Errorf("DE%d differs from moov's Spec87", id)
		}
	}
	for id := range s.MessageSpec().Fields {
		if iso8583.Spec87.Fields[id] == nil && (id < 66 || id > 128) {
			t.Errorf("DE%d was added; only 66 to 128 may be", id)
		}
	}
	if n := len(s.MessageSpec().Fields); n != 128 {
		t.Errorf("%d fields; want 0 to 128 but 65", n)
	}
}

// TestSpec87ASCIIMatchesMoovsJSON compares the rebuilt spec87ascii with
// the spec87ascii.json that moov-io/iso8583 ships, field by field.
func TestSpec87ASCIIMatchesMoovsJSON(t *testing.T) {
	data := corpus.Read(t, "iso8583", "specs", "spec87ascii.json")
	fromJSON, err := parseSpecJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	builtin := builtinSpec87ASCII()
	for id, want := range fromJSON.Fields {
		got := builtin.Fields[id]
		if got == nil {
			t.Errorf("DE%d: missing", id)
			continue
		}
		if reflect.TypeOf(got) != reflect.TypeOf(want) || !reflect.DeepEqual(got.Spec(), want.Spec()) {
			t.Errorf("DE%d: %T %+v, moov's JSON has %T %+v", id, got, got.Spec(), want, want.Spec())
		}
	}
	if len(fromJSON.Fields) != 66 {
		t.Errorf("moov's JSON has %d fields; the corpus changed", len(fromJSON.Fields))
	}
}

func TestLoadSpecJSONFromCorpus(t *testing.T) {
	tests := []struct {
		file string
		ok   bool
	}{
		{"spec87ascii.json", true},
		{"legacy-root-spec87ascii.json", false},
		{"legacy-attributes_data_elements.json", false},
		{"legacy-specification_ver_1987.json", false},
		{"legacy-specification_without_encoding_ver_1987.json", false},
		{"track2-field.json", false}, // no MTI or bitmap
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := corpus.File(t, "iso8583", "specs", tt.file)
			s, err := LoadSpec(path)
			if tt.ok != (err == nil) || err != nil && !errors.Is(err, ErrSpec) {
				t.Fatalf("LoadSpec: %v", err)
			}
			if s != nil && s.Name() != path {
				t.Errorf("name %q", s.Name())
			}
		})
	}
}

func TestLoadSpecJSON(t *testing.T) {
	const base = `"0": {"type": "String", "length": 4, "enc": "ASCII", "prefix": "ASCII.Fixed"},
		"1": {"type": "Bitmap", "length": 8, "enc": "HexToASCII", "prefix": "Hex.Fixed"}`
	tests := []struct {
		name, fields, wantErr string
	}{
		{"minimal", ``, ""},
		{"numeric amount", `, "4": {"type": "Numeric", "length": 12, "enc": "BCD", "prefix": "BCD.Fixed", "padding": {"type": "Left", "pad": "0"}}`, ""},
		{"track 2 type", `, "35": {"type": "Track2", "length": 37, "enc": "ASCII", "prefix": "ASCII.LL"}`, ""},
		{"composite", `, "55": {"type": "Composite", "length": 999, "prefix": "ASCII.LLL", "tag": {"length": 2, "enc": "ASCII", "sort": "StringsByInt"},
			"subfields": {"1": {"type": "String", "length": 2, "enc": "ASCII", "prefix": "ASCII.Fixed"}}}`, ""},
		{"composite without subfields", `, "55": {"type": "Composite", "length": 9, "enc": "ASCII", "prefix": "ASCII.LLL"}`, "Composite spec"},
		{"binary amount", `, "4": {"type": "Binary", "length": 6, "enc": "Binary", "prefix": "Binary.Fixed"}`, "field 4 is a *field.Binary"},
		{"unknown key", `, "4": {"type": "String", "length": 12, "enc": "ASCII", "prefix": "ASCII.Fixed", "pading": {}}`, "unknown field"},
		{"unknown prefix", `, "4": {"type": "String", "length": 12, "enc": "ASCII", "prefix": "ASCII.fixed"}`, "unknown prefix"},
		{"unknown encoding", `, "4": {"type": "String", "length": 12, "enc": "asciiEncoder", "prefix": "ASCII.Fixed"}`, "unknown encoding"},
		{"unknown type", `, "4": {"type": "Float", "length": 12, "enc": "ASCII", "prefix": "ASCII.Fixed"}`, "unknown type"},
		{"long pad", `, "4": {"type": "String", "length": 12, "enc": "ASCII", "prefix": "ASCII.Fixed", "padding": {"type": "Left", "pad": "00"}}`, "exactly one character"},
		{"unknown padding", `, "4": {"type": "String", "length": 12, "enc": "ASCII", "prefix": "ASCII.Fixed", "padding": {"type": "Middle", "pad": "0"}}`, "unknown padding"},
		{"bad key", `, "four": {"type": "String", "length": 12, "enc": "ASCII", "prefix": "ASCII.Fixed"}`, "not a field number"},
	}
	dir := t.TempDir()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strconv.Itoa(i)+".json")
			if err := os.WriteFile(path, []byte(`{"name": "test", "fields": {`+base+tt.fields+`}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadSpec(path)
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("LoadSpec: %v, want %q", err, tt.wantErr)
			}
		})
	}
	if _, err := LoadSpec(filepath.Join(dir, "absent.json")); !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), "neither a built-in spec") {
		t.Errorf("absent file: %v", err)
	}
}

// TestExactTwinKeepsLeadingZeros shows why the reader decodes with the
// twin: moov's Spec87 turns processing code 000000 into "0" and amount
// 000000000000 into "".
func TestExactTwinKeepsLeadingZeros(t *testing.T) {
	s, _ := LoadSpec(SpecName87)
	packed, err := Message{MTI: "0200", Fields: map[int]string{fieldProcessingCode: "000000", fieldAmount: "000000000000"}}.Pack(s)
	if err != nil {
		t.Fatal(err)
	}
	moov := iso8583.NewMessage(s.MessageSpec())
	if err := moov.Unpack(packed); err != nil {
		t.Fatal(err)
	}
	pc, _ := moov.GetString(fieldProcessingCode)
	amount, _ := moov.GetString(fieldAmount)
	if pc != "0" || amount != "" {
		t.Fatalf("moov now gives %q and %q; this test documents the loss of leading zeros", pc, amount)
	}
	var m message
	if derr := newDecoder(s).decode(packed, &m); derr != nil {
		t.Fatal(derr.text)
	}
	if m.values[fieldProcessingCode] != "000000" || m.values[fieldAmount] != "000000000000" {
		t.Errorf("the twin gives %q and %q", m.values[fieldProcessingCode], m.values[fieldAmount])
	}
}
