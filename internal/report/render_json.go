package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/clearing-dev/clearing/internal/output"
)

// discrepanciesOpen is where the list of discrepancies begins in the
// document as output.WriteJSON indents it. A newline and two spaces put it
// at the top level: a string value cannot hold a raw newline, so the text
// cannot occur anywhere else.
const discrepanciesOpen = "\n  \"discrepancies\": ["

// writeJSON writes the same bytes as output.WriteJSON(w, doc), with the
// empty lists written as [] and not null as docs/report.md promises, but
// without building the whole document in memory: output.WriteJSON marshals
// and then indents, holding about five times the output at once (490 MB
// for 100,000 discrepancies). Here the report without its discrepancies is
// written through output.WriteJSON into a buffer, and the discrepancies are
// encoded one at a time into the gap where its empty list stands. A test
// holds the result to output.WriteJSON's bytes.
func writeJSON(w io.Writer, r *Report, t *tally) error {
	doc := jsonDoc(r, t)
	doc.Discrepancies = []Discrepancy{}
	var head bytes.Buffer
	if err := output.WriteJSON(&head, doc); err != nil {
		return err
	}
	at := bytes.Index(head.Bytes(), []byte(discrepanciesOpen+"]"))
	if at < 0 || t.n == 0 {
		_, err := w.Write(head.Bytes())
		return err
	}
	at += len(discrepanciesOpen)
	if _, err := w.Write(head.Bytes()[:at]); err != nil {
		return err
	}
	var item bytes.Buffer
	enc := json.NewEncoder(&item)
	enc.SetIndent("    ", "  ")
	i := 0
	err := r.Each(func(d *Discrepancy) error {
		item.Reset()
		if i > 0 {
			item.WriteByte(',')
		}
		item.WriteString("\n    ")
		if err := enc.Encode(d); err != nil {
			return fmt.Errorf("discrepancies[%d]: %w", i, err)
		}
		i++
		// Encode ends the value with a newline; the list's own layout
		// decides what follows it.
		_, err := w.Write(item.Bytes()[:item.Len()-1])
		return err
	})
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, "\n  "+string(head.Bytes()[at:]))
	return err
}

// jsonDoc returns a shallow copy of r whose nil lists are empty, so that a
// consumer never needs a null check for a list, with the derived parts
// (the break ages, each bridge's auditor's form) filled in.
func jsonDoc(r *Report, t *tally) *Report {
	doc := *r
	if doc.Classes == nil {
		doc.Classes = []ClassCount{}
	}
	if doc.Discrepancies == nil {
		doc.Discrepancies = []Discrepancy{}
	}
	doc.BreakAges = slices.Clone(t.ages)
	doc.Bridge = make([]Bridge, len(r.Bridge))
	for i, b := range r.Bridge {
		if b.Differences == nil {
			b.Differences = []ClassTotal{}
		}
		if b.OutsideTotals == nil {
			b.OutsideTotals = []ClassTotal{}
		}
		b.Auditor = auditorOf(r, t, i)
		doc.Bridge[i] = b
	}
	return &doc
}
