package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/clearing-dev/clearing/formats/csv"
	"github.com/clearing-dev/clearing/formats/ipm"
	"github.com/clearing-dev/clearing/formats/iso8583"
)

// enumValue restricts a string flag to the values it lists (and its
// default), so that every mistyped value of every enumerated flag is the
// same usage error (exit 2), found while the flags are parsed, before any
// command reads a file or opens the database.
type enumValue struct {
	pflag.Value // the flag as declared
	def         string
	allowed     []string
	// orFile also accepts the path of an existing file (--iso-spec).
	orFile bool
	// prefix also accepts prefix followed by one of prefixed, and anything
	// that does not start with prefix (--map preset:NAME or a file).
	prefix   string
	prefixed []string
}

func (e *enumValue) Set(v string) error {
	switch {
	case v == e.def, slices.Contains(e.allowed, v):
	case e.prefix != "" && strings.HasPrefix(v, e.prefix):
		if name := strings.TrimPrefix(v, e.prefix); !slices.Contains(e.prefixed, name) {
			names := make([]string, len(e.prefixed))
			for i, p := range e.prefixed {
				names[i] = e.prefix + p
			}
			return fmt.Errorf("unknown %s %q: use %s", strings.TrimSuffix(e.prefix, ":"), name, orList(names))
		}
	case e.prefix != "":
	case e.orFile:
		if st, err := os.Stat(v); err != nil || !st.Mode().IsRegular() {
			return fmt.Errorf("use %s, or the path of a file", orList(e.allowed))
		}
	default:
		return fmt.Errorf("use %s", orList(e.allowed))
	}
	return e.Value.Set(v)
}

// restrictFlag makes the string flag name of f take only allowed values, or
// its default.
func restrictFlag(f *pflag.FlagSet, name string, allowed []string) {
	restrict(f, name, enumValue{allowed: allowed})
}

func restrict(f *pflag.FlagSet, name string, e enumValue) {
	fl := f.Lookup(name)
	e.Value, e.def = fl.Value, fl.Value.String()
	fl.Value = &e
}

// restrictReaderFlags restricts the flags that bindReaderFlags declares.
func restrictReaderFlags(f *pflag.FlagSet) {
	restrictFlag(f, "iso-framing", iso8583.Framings())
	restrictFlag(f, "ipm-blocking", []string{ipm.Blocked, ipm.Unblocked})
	restrictFlag(f, "ipm-encoding", ipm.Encodings())
	restrict(f, "iso-spec", enumValue{allowed: []string{iso8583.SpecName87ASCII, iso8583.SpecName87}, orFile: true})
	restrict(f, "map", enumValue{prefix: "preset:", prefixed: csv.Presets()})
}
