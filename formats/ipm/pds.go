package ipm

import "fmt"

// pdsFields are the elements that carry private data subfields, in the
// order a subfield that does not fit in one overflows into the next.
var pdsFields = [...]int{48, 62, 123, 124, 125}

// pdsSet is the PDSs of one message by tag ("0148"). It is reused from
// message to message.
type pdsSet struct {
	values map[string]string
	order  []string
}

func (p *pdsSet) reset() {
	clear(p.values)
	p.order = p.order[:0]
}

// get returns the value of PDS tag ("0148").
func (p *pdsSet) get(tag string) (string, bool) {
	v, ok := p.values[tag]
	return v, ok
}

// pdsError says where a PDS stream is malformed.
type pdsError struct {
	pos  int // character position in the joined PDS data
	text string
}

func (e *pdsError) Error() string { return fmt.Sprintf("at character %d: %s", e.pos, e.text) }

// splitPDS calls fn for every "tttt lll value" subfield of data, the
// joined text of DE48, DE62 and DE123 to DE125. A subfield may cross from
// one element into the next; joining first is what lets it. Lengths count
// characters on the wire, which are runes here.
func splitPDS(data string, fn func(tag, value string) error) error {
	rs := []rune(data)
	for i := 0; i < len(rs); {
		if len(rs)-i < 7 {
			return &pdsError{i, fmt.Sprintf("%d characters remain, too few for a tag and a length", len(rs)-i)}
		}
		tag, ln := rs[i:i+4], rs[i+4:i+7]
		if !runeDigits(tag) {
			return &pdsError{i, "the tag is not four digits"}
		}
		if !runeDigits(ln) {
			return &pdsError{i, fmt.Sprintf("the length of PDS%s is not three digits", string(tag))}
		}
		n := int(ln[0]-'0')*100 + int(ln[1]-'0')*10 + int(ln[2]-'0')
		if len(rs)-i-7 < n {
			return &pdsError{i, fmt.Sprintf("PDS%s announces %d characters but %d remain", string(tag), n, len(rs)-i-7)}
		}
		if err := fn(string(tag), string(rs[i+7:i+7+n])); err != nil {
			return &pdsError{i, err.Error()}
		}
		i += 7 + n
	}
	return nil
}

// parsePDS fills m.pds from the message's PDS-bearing elements.
func (m *message) parsePDS() error {
	if m.pds.values == nil {
		m.pds.values = make(map[string]string)
	}
	var joined string
	for _, id := range pdsFields {
		if m.has[id] {
			joined += m.values[id]
		}
	}
	return splitPDS(joined, func(tag, value string) error {
		if _, dup := m.pds.values[tag]; dup {
			return fmt.Errorf("PDS%s is given twice", tag)
		}
		m.pds.values[tag] = value
		m.pds.order = append(m.pds.order, tag)
		return nil
	})
}

func runeDigits(rs []rune) bool {
	for _, r := range rs {
		if r < '0' || r > '9' {
			return false
		}
	}
	return len(rs) > 0
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return len(s) > 0
}
