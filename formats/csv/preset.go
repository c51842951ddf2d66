package csv

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// presetFS holds the shipped presets, one TOML mapping per file.
//
//go:embed presets/*.toml
var presetFS embed.FS

// Presets returns the names of the shipped presets, in order. Each is
// addressed as "preset:NAME" where a mapping path is expected, or extended by
// a mapping file that says preset = "NAME" and names its own source.
func Presets() []string {
	entries, err := fs.ReadDir(presetFS, "presets")
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".toml"))
	}
	sort.Strings(names)
	return names
}

// presetMapping parses one shipped preset. A preset may not itself name a
// preset, so there is no chain to follow.
func presetMapping(name string) (*Mapping, error) {
	data, err := presetFS.ReadFile(path.Join("presets", name+".toml"))
	if err != nil || strings.ContainsAny(name, "/\\") {
		return nil, fmt.Errorf("%w: %q; the presets are %s", ErrUnknownPreset, name, strings.Join(Presets(), ", "))
	}
	m, _, err := decodeMapping(data)
	if err != nil {
		return nil, fmt.Errorf("preset %s: %w", name, err)
	}
	if m.Preset != "" {
		return nil, fmt.Errorf("preset %s: %w: a preset cannot start from another preset", name, ErrMapping)
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("preset %s: %w", name, err)
	}
	return m, nil
}
