package ipm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/corpus"
	"github.com/clearing-dev/clearing/internal/money"
)

// sidecar is the part of a corpus file's JSON sidecar the test reads.
type sidecar struct {
	File     string `json:"file"`
	Framing  string `json:"framing"`
	Bytes    int64  `json:"bytes"`
	Messages []struct {
		I      int               `json:"i"`
		Offset int64             `json:"offset"`
		Expect map[string]any    `json:"expect"`
		Fields map[string]string `json:"fields"`
	} `json:"messages"`
	Summary struct {
		Statement []struct {
			BusinessDate string `json:"business_date"`
			Currency     string `json:"currency"`
			NetMinor     int64  `json:"net_minor"`
		} `json:"statement"`
		Incomplete *struct {
			I      int   `json:"i"`
			Offset int64 `json:"offset"`
		} `json:"incomplete_record"`
	} `json:"summary"`
}

func (s *sidecar) refused() bool {
	for _, m := range s.Messages {
		if m.Expect["outcome"] == "refuse_file" {
			return true
		}
	}
	return false
}

// TestCorpus reads every file of $CLEARING_CORPUS/ipm and checks each
// record against its sidecar: offsets, keys, amounts, currencies, links,
// the duplicates and the conflict across files, the statement lines, and
// the two refusals.
func TestCorpus(t *testing.T) {
	dir := corpus.Dir(t, "ipm")
	paths, err := filepath.Glob(filepath.Join(dir, "*.ipm"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no .ipm files in %s (%v)", dir, err)
	}
	sort.Strings(paths)
	byRef := map[string]formats.Record{} // "file#i" -> record
	cars := map[string]*sidecar{}
	for _, p := range paths {
		name := filepath.Base(p)
		var sc sidecar
		js, err := os.ReadFile(strings.TrimSuffix(p, ".ipm") + ".json")
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(js, &sc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cars[name] = &sc
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) {
			res := readAll(t, data, testOptions())
			checkNoPAN(t, &sc, &res)
			if sc.refused() {
				checkRefusal(t, &sc, &res)
				return
			}
			if !res.ok() {
				t.Fatalf("errors %v, final %v", res.errs, res.final)
			}
			if want := strings.Contains(sc.Framing, "1014-blocked"); res.rd.Blocked() != want {
				t.Errorf("read as blocked=%v, the sidecar says %q", res.rd.Blocked(), sc.Framing)
			}
			if len(res.recs) != len(sc.Messages) {
				t.Fatalf("%d records, the sidecar has %d messages", len(res.recs), len(sc.Messages))
			}
			for i, m := range sc.Messages {
				rec := res.recs[i]
				ref := fmt.Sprintf("%s#%d", name, m.I)
				byRef[ref] = rec
				if rec.Offset != m.Offset || rec.Line != int64(m.I+1) {
					t.Errorf("%s: line %d offset %d, want %d and %d", ref, rec.Line, rec.Offset, m.I+1, m.Offset)
				}
				checkMessage(t, ref, m.Expect, m.Fields, rec)
			}
			if len(sc.Summary.Statement) > 0 {
				checkStatement(t, &sc, data)
			}
		})
	}
	t.Run("across files", func(t *testing.T) {
		for name, sc := range cars {
			for _, m := range sc.Messages {
				ref := fmt.Sprintf("%s#%d", name, m.I)
				rec, ok := byRef[ref]
				if !ok {
					continue
				}
				if other, ok := m.Expect["same_as"].(string); ok {
					if o := byRef[other]; o.Key != rec.Key || formats.Digest(&o) != formats.Digest(&rec) {
						t.Errorf("%s is not a duplicate of %s: %s vs %s", ref, other, rec.Key, o.Key)
					}
				}
				if other, ok := m.Expect["conflicts_with"].(string); ok {
					if o := byRef[other]; o.Key != rec.Key || formats.Digest(&o) == formats.Digest(&rec) || o.Amount == rec.Amount {
						t.Errorf("%s does not conflict with %s on the amount", ref, other)
					}
				}
				if other, ok := m.Expect["links_to"].(string); ok {
					checkLink(t, ref, rec, other, byRef[other])
				}
			}
		}
	})
}

// checkMessage checks one record against the fields as written.
func checkMessage(t *testing.T, ref string, expect map[string]any, f map[string]string, rec formats.Record) {
	t.Helper()
	kind, _ := expect["kind"].(string)
	if expect["outcome"] == "control" || expect["outcome"] == "statement" {
		if rec.Kind != formats.Skip {
			t.Errorf("%s (%s): kind %s, want skip", ref, kind, rec.Kind)
		}
		return
	}
	var want formats.Kind
	var key string
	switch {
	case strings.HasPrefix(kind, "fee_collection"):
		want, key = formats.Clearing, "ipm:"+f["DE94"]+":1740:"+f["DE24"]+":"+f["PDS0137"]
	case strings.HasSuffix(kind, "_reversal"):
		want, key = formats.Reversal, "ipm:"+f["DE31"]+":"+f["MTI"]+":"+f["DE24"]+":reversal"
	case strings.HasPrefix(kind, "chargeback"), strings.HasPrefix(kind, "second_presentment"):
		want, key = formats.Return, "ipm:"+f["DE31"]+":"+f["MTI"]+":"+f["DE24"]
	default:
		want, key = formats.Clearing, "ipm:"+f["DE31"]+":"+f["MTI"]+":"+f["DE24"]
	}
	if rec.Kind != want || rec.Key != key {
		t.Errorf("%s (%s): %s %s, want %s %s", ref, kind, rec.Kind, rec.Key, want, key)
	}
	amt, _ := strconv.ParseInt(f["DE4"], 10, 64)
	cur, err := money.LookupCurrency(f["DE49"])
	if err != nil || rec.Amount != amt || rec.Currency != cur.Code {
		t.Errorf("%s: %d %s, want %d %s", ref, rec.Amount, rec.Currency, amt, cur.Code)
	}
	last4 := f["DE2"][max(0, len(f["DE2"])-4):]
	if fee := strings.HasPrefix(kind, "fee"); (fee && rec.Account.ID != "") || (!fee && rec.Account.Last4 != last4) {
		t.Errorf("%s: account last4 %q", ref, rec.Account.Last4)
	}
	if want != formats.Clearing && (rec.Link == nil || rec.Link.Reference != f["DE31"] || rec.Link.KeyPrefix != "ipm:"+f["DE31"]+":1240:200") {
		t.Errorf("%s: link %+v", ref, rec.Link)
	}
}

// checkLink checks that a linked record reaches the record the sidecar
// names: a chargeback or reversal its presentment, a second presentment
// its chargeback.
func checkLink(t *testing.T, ref string, rec formats.Record, other string, o formats.Record) {
	t.Helper()
	if rec.Link == nil {
		t.Errorf("%s: no link, want one to %s", ref, other)
		return
	}
	parent := rec.Link.Suffix[:strings.LastIndexByte(rec.Link.Suffix, ':')]
	switch {
	case o.Kind == formats.Clearing:
		if rec.Link.KeyPrefix != o.Key || parent != "" || rec.Direction != o.Direction || rec.Currency != o.Currency || rec.Amount > o.Amount {
			t.Errorf("%s: link %+v does not reach %s (%s)", ref, rec.Link, other, o.Key)
		}
	case o.Link != nil:
		if rec.Link.KeyPrefix != o.Link.KeyPrefix || parent != o.Link.Suffix || rec.Amount > o.Amount {
			t.Errorf("%s: link %+v does not reach %s (%+v)", ref, rec.Link, other, o.Link)
		}
	default:
		t.Errorf("%s: links to %s, which is a %s", ref, other, o.Kind)
	}
}

// checkStatement reads the positions file as a statement and finds the
// sidecar's settlement lines.
func checkStatement(t *testing.T, sc *sidecar, data []byte) {
	t.Helper()
	opts := testOptions()
	opts.Statement = true
	res := readAll(t, data, opts)
	if !res.ok() {
		t.Fatalf("as a statement: errors %v, final %v", res.errs, res.final)
	}
	var lines []string
	for _, r := range res.recs {
		if r.Kind == formats.Clearing && r.LineType == formats.SettlementTotal {
			sign := int64(1)
			if r.Direction == formats.Debit {
				sign = -1
			}
			lines = append(lines, fmt.Sprintf("%s %s %d", r.ValueDate.Format("2006-01-02"), r.Currency, sign*r.Amount))
		}
	}
	var want []string
	for _, s := range sc.Summary.Statement {
		want = append(want, fmt.Sprintf("%s %s %d", s.BusinessDate, s.Currency, s.NetMinor))
	}
	sort.Strings(lines)
	sort.Strings(want)
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("statement lines\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// checkRefusal checks that a file the sidecar refuses is refused, with an
// error that names the fault and its offset.
func checkRefusal(t *testing.T, sc *sidecar, res *result) {
	t.Helper()
	errs := append([]error(nil), res.errs...)
	if !errors.Is(res.final, io.EOF) {
		errs = append(errs, res.final)
	}
	if len(errs) == 0 {
		t.Fatal("the file was accepted")
	}
	var pe *formats.ParseError
	if !errors.As(errs[0], &pe) {
		t.Fatalf("the first error %v names no offset", errs[0])
	}
	if inc := sc.Summary.Incomplete; inc != nil {
		if !errors.Is(pe, ErrTruncated) || pe.Offset != inc.Offset || pe.Line != int64(inc.I+1) {
			t.Errorf("error %v, want a truncation at record %d, offset %d", pe, inc.I+1, inc.Offset)
		}
		return
	}
	last := sc.Messages[len(sc.Messages)-1]
	if !errors.Is(pe, ErrControl) || pe.Field != "PDS0306" || pe.Offset != last.Offset ||
		!strings.Contains(pe.Error(), "DE71 "+last.Fields["DE71"]) {
		t.Errorf("error %v, want PDS0306 of the trailer at offset %d", pe, last.Offset)
	}
}

// checkNoPAN guards principle 9: no PAN in a record or an error.
func checkNoPAN(t *testing.T, sc *sidecar, res *result) {
	t.Helper()
	var text strings.Builder
	for _, r := range res.recs {
		fmt.Fprintf(&text, "%+v\n", r)
	}
	for _, e := range append(res.errs, res.final) {
		if e != nil {
			text.WriteString(e.Error())
		}
	}
	for _, m := range sc.Messages {
		if pan := m.Fields["DE2"]; pan != "" && strings.Contains(text.String(), pan) {
			t.Fatalf("the PAN of message %d appears in a record or an error", m.I)
		}
	}
}
