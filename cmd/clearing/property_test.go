package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/clearing-dev/clearing/formats/ach"
)

// propertyChecks is how many random cases the property test tries unless
// -rapid.checks (or RAPID_CHECKS) asks for another number: enough to vary
// every dimension in CI, few enough to stay within seconds.
const propertyChecks = 25

// defaultRapidChecks sets rapid's number of checks to n for this test,
// unless the command line or the environment chose one.
func defaultRapidChecks(t *testing.T, n int) {
	chosen := os.Getenv("RAPID_CHECKS") != ""
	flag.Visit(func(f *flag.Flag) { chosen = chosen || f.Name == "rapid.checks" })
	f := flag.Lookup("rapid.checks")
	if chosen || f == nil {
		return
	}
	old := f.Value.String()
	if err := f.Value.Set(strconv.Itoa(n)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Value.Set(old) }) //nolint:errcheck // it held this value before
}

// arrival is one file in the order it arrives: forward entries under some
// file header, or returns or dishonored returns of entries sent earlier.
type arrival struct {
	entries []ach.Entry
	returns []ach.Return
	header  ach.Header
}

// returnsHeader dates every return file alike. A return carries no
// effective date, so the reader dates it by its file's creation; the same
// returns under another creation date are a conflict, not a duplicate.
var returnsHeader = ach.DefaultHeader(created.Add(48 * time.Hour))

// For random sets of entries: any order, any split into files (each under
// its own file header), any re-sending of any subset, any chunk size, and
// returns and dishonored returns of any subset arriving in files of their
// own at any point after their originals, give the ledger that applying
// each intent once, in order, gives. Every record sent more than once is
// audited as a duplicate, and nothing needs a person.
func TestAnyOrderSplitAndResendGiveTheLedgerOfEachIntentOnce(t *testing.T) {
	t.Parallel()
	defaultRapidChecks(t, propertyChecks)
	c := newCLI(t)
	check := 0
	rapid.Check(t, func(rt *rapid.T) {
		check++
		n := rapid.IntRange(1, 40).Draw(rt, "entries")
		es := entries(rapid.Uint64().Draw(rt, "seed"), n)
		files := drawEntryFiles(rt, es)
		returns, dishonors := drawReturns(rt, es)
		files = placeAfterOriginals(rt, files, returns, dishonors)
		chunk := rapid.IntRange(1, 50).Draw(rt, "chunk size")

		ref := c.withTenant(c.t, fmt.Sprintf("reference %d", check))
		once := []arrival{{entries: es, header: ach.DefaultHeader(created)}}
		if len(returns) > 0 {
			once = append(once, arrival{returns: returns, header: returnsHeader})
		}
		if len(dishonors) > 0 {
			once = append(once, arrival{returns: dishonors, header: returnsHeader})
		}
		ingestAll(rt, ref, fmt.Sprintf("ref%d", check), once, 0)
		got := c.withTenant(c.t, fmt.Sprintf("check %d", check))
		sent := ingestAll(rt, got, fmt.Sprintf("chk%d", check), files, chunk)

		want := ref.render(ledgerQueries)
		if have := got.render(ledgerQueries); have != want {
			rt.Fatalf("the ledger differs from applying each intent once:\n%s", diffLines(want, have))
		}
		intents := int64(n + len(returns) + len(dishonors))
		audited := got.count(`SELECT count(*) FROM audit_events WHERE tenant_id = $1 AND verdict = 'duplicate'`, got.tenant)
		all := got.count(`SELECT count(*) FROM audit_events WHERE tenant_id = $1`, got.tenant)
		if audited != sent-intents || all != audited {
			rt.Fatalf("%d records sent for %d intents: %d duplicates audited (%d audit events), want %d",
				sent, intents, audited, all, sent-intents)
		}
	})
}

// drawEntryFiles splits a permutation of es into files, adds files that
// re-send random subsets, and shuffles the order the files arrive in.
func drawEntryFiles(rt *rapid.T, es []ach.Entry) []arrival {
	order := rapid.Permutation(es).Draw(rt, "order")
	parts := rapid.IntRange(1, min(len(es), 4)).Draw(rt, "files")
	cuts := rapid.SliceOfNDistinct(rapid.IntRange(1, max(len(es)-1, 1)), parts-1, parts-1, rapid.ID[int]).Draw(rt, "cuts")
	slices.Sort(cuts)
	var groups [][]ach.Entry
	lo := 0
	for _, hi := range append(cuts, len(es)) {
		groups = append(groups, order[lo:hi])
		lo = hi
	}
	for range rapid.IntRange(0, 3).Draw(rt, "re-sent files") {
		idx := rapid.SliceOfNDistinct(rapid.IntRange(0, len(es)-1), 1, len(es), rapid.ID[int]).Draw(rt, "re-sent entries")
		var g []ach.Entry
		for _, i := range idx {
			g = append(g, es[i])
		}
		groups = append(groups, g)
	}
	groups = rapid.Permutation(groups).Draw(rt, "file order")
	files := make([]arrival, len(groups))
	for i, g := range groups {
		h := ach.DefaultHeader(created.Add(time.Duration(rapid.IntRange(0, 600).Draw(rt, "minutes later")) * time.Minute))
		h.IDModifier = string(rune('A' + rapid.IntRange(0, 25).Draw(rt, "file id modifier")))
		h.FirstBatch = rapid.IntRange(1, 99).Draw(rt, "first batch")
		h.BatchSize = rapid.IntRange(1, 10).Draw(rt, "batch size")
		files[i] = arrival{entries: g, header: h}
	}
	return files
}

// drawReturns chooses live entries to return, and returns to dishonor.
func drawReturns(rt *rapid.T, es []ach.Entry) (returns, dishonors []ach.Return) {
	live := liveOnly(es)
	if len(live) == 0 {
		return nil, nil
	}
	picked := rapid.SliceOfNDistinct(rapid.IntRange(0, len(live)-1), 0, min(len(live), 6), rapid.ID[int]).Draw(rt, "returned")
	for k, i := range picked {
		returns = append(returns, ach.ReturnOf(live[i], "R01", k+1))
	}
	if len(returns) == 0 {
		return nil, nil
	}
	for k, i := range rapid.SliceOfNDistinct(rapid.IntRange(0, len(returns)-1), 0, len(returns), rapid.ID[int]).Draw(rt, "dishonored") {
		dishonors = append(dishonors, ach.DishonorOf(returns[i], "R69", 100+k))
	}
	return returns, dishonors
}

// placeAfterOriginals spreads returns over return files and dishonors over
// dishonor files, possibly sends one of them again, and inserts each file
// at a random place after every file that first brings what it refers to.
func placeAfterOriginals(rt *rapid.T, files []arrival, returns, dishonors []ach.Return) []arrival {
	spread := func(rs []ach.Return, label string) []arrival {
		if len(rs) == 0 {
			return nil
		}
		out := make([]arrival, rapid.IntRange(1, min(len(rs), 3)).Draw(rt, label+" files"))
		for _, r := range rs {
			i := rapid.IntRange(0, len(out)-1).Draw(rt, label+" file")
			out[i].returns, out[i].header = append(out[i].returns, r), returnsHeader
		}
		return slices.DeleteFunc(out, func(a arrival) bool { return len(a.returns) == 0 })
	}
	later := append(spread(returns, "return"), spread(dishonors, "dishonor")...)
	if len(later) > 0 && rapid.Bool().Draw(rt, "a return file sent again") {
		later = append(later, later[rapid.IntRange(0, len(later)-1).Draw(rt, "which")])
	}
	for _, f := range later {
		first := 0
		for _, r := range f.returns {
			first = max(first, firstBringing(files, r)+1)
		}
		at := rapid.IntRange(first, len(files)).Draw(rt, "arrives at")
		files = slices.Insert(files, at, f)
	}
	return files
}

// firstBringing is the index of the first file that brings what r refers
// to: the original entry of a return, or the return a dishonor answers.
func firstBringing(files []arrival, r ach.Return) int {
	for i, f := range files {
		if r.ReturnTrace == "" && slices.ContainsFunc(f.entries, func(e ach.Entry) bool { return e.Key() == r.Original.Key() }) {
			return i
		}
		if r.ReturnTrace != "" && slices.ContainsFunc(f.returns, func(o ach.Return) bool {
			return o.ReturnTrace == "" && o.Trace == r.ReturnTrace && o.Original.Key() == r.Original.Key()
		}) {
			return i
		}
	}
	panic(fmt.Sprintf("nothing brings the original of %s", r.Key()))
}

// ingestAll writes the files and ingests them, in order, with one command,
// and returns how many records they held. Every file must post without
// needing a person: nothing in them conflicts or is orphaned.
func ingestAll(rt *rapid.T, c *cli, prefix string, files []arrival, chunk int) int64 {
	args := []string{"-o", "json", "ingest"}
	if chunk > 0 {
		args = append(args, "--chunk-size", strconv.Itoa(chunk))
	}
	for i, f := range files {
		var b bytes.Buffer
		var err error
		if f.returns != nil {
			err = ach.WriteReturns(&b, f.header, slices.Values(f.returns))
		} else {
			err = ach.WriteEntries(&b, f.header, slices.Values(f.entries))
		}
		if err != nil {
			rt.Fatalf("file %d: %v", i, err)
		}
		path := filepath.Join(c.dir, fmt.Sprintf("%s-%02d.ach", prefix, i))
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			rt.Fatal(err)
		}
		args = append(args, path)
	}
	r := c.exec(args...)
	if r.code != 0 {
		rt.Fatalf("want exit 0\n%v", r)
	}
	sums := summaries(c.t, []result{r})
	if len(sums) != len(files) {
		rt.Fatalf("%d summaries for %d files:\n%v", len(sums), len(files), r)
	}
	var records int64
	for _, s := range sums {
		if s.Status != "done" {
			rt.Fatalf("%s is %s, want done:\n%v", s.File, s.Status, r)
		}
		records += s.Records
	}
	return records
}
