package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/clearing-dev/clearing/formats/ach"
)

// Each return says what it requires next, from the pinned table, and
// names the original it reversed; a NOC names the field to correct.
func TestReturnsSayWhatToDoNext(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	es := liveOnly(slices.Collect(ach.GenerateEntries(43, 12)))
	c.ingest(0, c.achFile("day.ach", ach.DefaultHeader(created), es))
	var rs bytes.Buffer
	if err := ach.WriteReturns(&rs, ach.DefaultHeader(created.Add(24*time.Hour)), slices.Values([]ach.Return{
		ach.ReturnOf(es[0], "R01", 1), ach.ReturnOf(es[1], "R07", 2), ach.ReturnOf(es[2], "R03", 3)})); err != nil {
		t.Fatal(err)
	}
	c.ingest(0, c.file("returns.ach", rs.Bytes()))
	var ns bytes.Buffer
	if err := ach.WriteNotices(&ns, ach.DefaultHeader(created.Add(48*time.Hour)), slices.Values([]ach.Notice{
		ach.NoticeOf(es[3], "C01", "123456789", 4)})); err != nil {
		t.Fatal(err)
	}
	c.ingest(0, c.file("nocs.ach", ns.Bytes()))

	var got []struct {
		Key, Kind, Original, Code, Action string
		Return                            *ach.ReturnRule `json:"return_rule"`
		Change                            *ach.ChangeRule `json:"change_rule"`
		AccountLast4                      string          `json:"account_last4"`
	}
	if err := json.Unmarshal([]byte(c.must(0, "-o", "json", "returns").stdout), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		original          ach.Entry
		stop, unauth      bool
		represent         int
		timeFrame, change string
	}{
		"R01": {original: es[0], represent: 2, timeFrame: ach.TwoBankingDays},
		"R07": {original: es[1], stop: true, unauth: true, timeFrame: ach.SixtyCalendar},
		"R03": {original: es[2], stop: true, timeFrame: ach.TwoBankingDays},
		"C01": {original: es[3], change: "account"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d returns and NOCs listed, want %d: %+v", len(got), len(want), got)
	}
	for _, g := range got {
		w, ok := want[g.Code]
		if !ok || g.Original != w.original.Key() {
			t.Fatalf("%s: original %q, want %q", g.Code, g.Original, w.original.Key())
		}
		// The original is the one the ledger's row names.
		if g.Kind == "return" && c.count(`SELECT count(*) FROM postings p JOIN postings o ON o.tenant_id = p.tenant_id AND o.id = p.refers_to
		                                   WHERE p.tenant_id = $1 AND p.posting_key = $2 AND o.posting_key = $3`, c.tenant, g.Key, g.Original) != 1 {
			t.Fatalf("%s: the ledger's return %s does not refer to %s", g.Code, g.Key, g.Original)
		}
		if len(g.AccountLast4) != 4 {
			t.Fatalf("%s: account %q, want its last four digits", g.Code, g.AccountLast4)
		}
		switch {
		case w.change != "":
			if g.Change == nil || !bytes.Contains(bytes.ToLower([]byte(g.Change.Reason)), []byte(w.change)) {
				t.Fatalf("%s: %+v, want a change of the %s", g.Code, g.Change, w.change)
			}
		case g.Return == nil || g.Return.StopDebits != w.stop || g.Return.Unauthorized != w.unauth ||
			g.Return.Represent != w.represent || g.Return.TimeFrame != w.timeFrame:
			t.Fatalf("%s: %+v, want %+v", g.Code, g.Return, w)
		}
	}
}
