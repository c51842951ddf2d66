package ipm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/corpus"
)

// ledgerModel applies records by the rules internal/ledger applies them
// (DESIGN §4 and §5): a clearing record posts under its key once; a linked
// record finds exactly one clearing original by reference and key prefix,
// the posting its suffix's parent names, the same direction and currency
// and no more than the parent's amount, and posts under the original's key
// plus its suffix. It is a model of those rules, to check that this
// package's records fit them, not a stand-in for the ledger's tests.
type ledgerModel struct {
	postings                     map[string]modelPosting
	duplicates, conflicts, holds int
}

type modelPosting struct {
	kind      formats.Kind
	reference string
	digest    [32]byte
	amount    int64
	currency  string
	direction formats.Direction
}

func (l *ledgerModel) apply(rec formats.Record) {
	key := rec.Key
	if rec.Link != nil {
		var origins []string
		for k, p := range l.postings {
			if p.kind == formats.Clearing && p.reference == rec.Link.Reference && strings.HasPrefix(k, rec.Link.KeyPrefix) {
				origins = append(origins, k)
			}
		}
		if len(origins) != 1 {
			l.holds++
			return
		}
		parentSuffix := rec.Link.Suffix[:strings.LastIndexByte(rec.Link.Suffix, ':')]
		parent, ok := l.postings[origins[0]+parentSuffix]
		origin := l.postings[origins[0]]
		if !ok || rec.Direction != origin.direction || rec.Currency != parent.currency || rec.Amount > parent.amount {
			l.holds++
			return
		}
		key = origins[0] + rec.Link.Suffix
	}
	d := formats.Digest(&rec)
	if p, ok := l.postings[key]; ok {
		if p.digest == d {
			l.duplicates++
		} else {
			l.conflicts++
		}
		return
	}
	l.postings[key] = modelPosting{rec.Kind, rec.Reference, d, rec.Amount, rec.Currency, rec.Direction}
}

// TestCorpusStory replays the corpus in the order of its README against
// the ledger model and finds the counts the issue expects: 64 postings,
// 65 duplicates, 1 conflict and 1 orphan chargeback held.
func TestCorpusStory(t *testing.T) {
	dir := corpus.Dir(t, "ipm")
	l := &ledgerModel{postings: map[string]modelPosting{}}
	for _, name := range []string{"day1-blocked-ebcdic", "day1-resent-unblocked", "day1-corrected", "day1-restated",
		"day2-chargebacks", "day2-reversals", "day2-fees", "day3-second-presentments"} {
		data, err := os.ReadFile(filepath.Join(dir, name+".ipm"))
		if err != nil {
			t.Fatal(err)
		}
		res := readAll(t, data, testOptions())
		if !res.ok() {
			t.Fatalf("%s: errors %v, final %v", name, res.errs, res.final)
		}
		for _, rec := range res.recs {
			if rec.Kind != formats.Skip {
				l.apply(rec)
			}
		}
	}
	kinds := map[formats.Kind]int{}
	for _, p := range l.postings {
		kinds[p.kind]++
	}
	if len(l.postings) != 64 || l.duplicates != 65 || l.conflicts != 1 || l.holds != 1 ||
		kinds[formats.Clearing] != 54 || kinds[formats.Return] != 8 || kinds[formats.Reversal] != 2 {
		t.Errorf("%d postings %v, %d duplicates, %d conflicts, %d held", len(l.postings), kinds, l.duplicates, l.conflicts, l.holds)
	}
}

// TestLongLifecycle follows one ARN through every stage, in separate
// files, and checks the keys each posts under by the ledger's rules; an
// arbitration chargeback whose second presentment is unknown is held.
func TestLongLifecycle(t *testing.T) {
	step := func(mti, de24, amount string, pds ...PDS) Message {
		m := presentment(testARN, "00000002", amount)
		m.MTI, m.Fields[24] = mti, de24
		m.PDS = append(pds, m.PDS...)
		return m
	}
	files := [][]Message{
		{step("1240", "200", "000000010000")},
		{step("1442", "450", "000000010000")},
		{step("1240", "282", "000000004000")},
		{step("1442", "454", "000000004000")},
		{step("1442", "454", "000000004000", PDS{"0025", "R261105"})},
	}
	l := &ledgerModel{postings: map[string]modelPosting{}}
	orphan := step("1442", "451", "000000001000")
	orphan.Fields[31] = "05454546304001603000012"
	files = append(files, []Message{orphan})
	for i, msgs := range files {
		amt := msgs[0].Fields[4]
		file := append([]Message{header(fid)}, msgs...)
		file = append(file, trailer(fid, "00000003", "0000"+amt, "00000003"))
		res := readAll(t, writeFile(t, i%2 == 0, EncodingCP500, file...), testOptions())
		if !res.ok() {
			t.Fatalf("file %d: errors %v, final %v", i, res.errs, res.final)
		}
		l.apply(res.recs[1])
	}
	base := "ipm:" + testARN + ":1240:200"
	for _, k := range []string{base, base + ":chargeback", base + ":chargeback:second_presentment",
		base + ":chargeback:second_presentment:arbitration", base + ":chargeback:second_presentment:arbitration:reversal"} {
		if _, ok := l.postings[k]; !ok {
			t.Errorf("nothing posted under %s", k)
		}
	}
	if len(l.postings) != 5 || l.holds != 1 || l.duplicates+l.conflicts != 0 {
		t.Errorf("%d postings, %d held, %d duplicates, %d conflicts", len(l.postings), l.holds, l.duplicates, l.conflicts)
	}
}
