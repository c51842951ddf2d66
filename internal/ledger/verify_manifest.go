package ledger

import (
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strings"

	"github.com/clearing-dev/clearing/migrations"
)

// guardTrigger is a trigger as the migrations create it.
type guardTrigger struct {
	Name     string
	Table    string
	Function string
	// Type is pg_trigger.tgtype: the level, timing and events, as bits.
	Type    int16
	HasWhen bool
}

// guardManifest is what the migrations say the ledger's triggers and
// functions are: verify compares the database with it. It is read from the
// migrations embedded in this binary, so a migration that adds a trigger
// or replaces a function is checked without a list to keep in step.
type guardManifest struct {
	Triggers []guardTrigger
	// Bodies holds, per function name, the body of each signature as the
	// latest migration that defines it wrote it.
	Bodies map[string][]string
	// Definer says, per function name, whether the latest migration that
	// defines it made it SECURITY DEFINER.
	Definer map[string]bool
}

// rejectFunction is the trigger function that makes a table append-only.
const rejectFunction = "clearing_reject_change"

// Protected is the tables a migration protects with clearing_reject_change,
// sorted.
func (m guardManifest) Protected() []string {
	set := map[string]bool{}
	for _, t := range m.Triggers {
		if t.Function == rejectFunction {
			set[t.Table] = true
		}
	}
	return sortedKeys(set)
}

// Tables is every table that has a trigger in the manifest, sorted.
func (m guardManifest) Tables() []string {
	set := map[string]bool{}
	for _, t := range m.Triggers {
		set[t.Table] = true
	}
	return sortedKeys(set)
}

// Functions is every function the manifest knows a body of, sorted.
func (m guardManifest) Functions() []string {
	set := map[string]bool{}
	for name := range m.Bodies {
		set[name] = true
	}
	return sortedKeys(set)
}

func sortedKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// The bits of pg_trigger.tgtype (src/include/catalog/pg_trigger.h).
const (
	tgRow      = 1 << 0
	tgBefore   = 1 << 1
	tgInsert   = 1 << 2
	tgDelete   = 1 << 3
	tgUpdate   = 1 << 4
	tgTruncate = 1 << 5
	tgInstead  = 1 << 6
)

var (
	reCreateTrigger = regexp.MustCompile(`(?is)\bCREATE\s+(?:OR\s+REPLACE\s+)?(?:CONSTRAINT\s+)?TRIGGER\s+(\w+)\s+` +
		`(BEFORE|AFTER|INSTEAD\s+OF)\s+(.+?)\s+ON\s+(?:\w+\.)?(\w+)\s+(.*?)\bEXECUTE\s+(?:FUNCTION|PROCEDURE)\s+(?:\w+\.)?(\w+)\s*\(`)
	reDropTrigger   = regexp.MustCompile(`(?is)\bDROP\s+TRIGGER\s+(?:IF\s+EXISTS\s+)?(\w+)\s+ON\s+(?:\w+\.)?(\w+)`)
	reCreateFunc    = regexp.MustCompile(`(?is)\bCREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+(?:\w+\.)?(\w+)\s*\(`)
	reDropFunc      = regexp.MustCompile(`(?is)\bDROP\s+FUNCTION\s+(?:IF\s+EXISTS\s+)?(?:\w+\.)?(\w+)`)
	reDollarTag     = regexp.MustCompile(`\$[A-Za-z_]*\$`)
	reDollarTagHere = regexp.MustCompile(`^\$[A-Za-z_]*\$`)
	reForEach       = regexp.MustCompile(`(?is)\bFOR\s+EACH\s+(ROW|STATEMENT)\b`)
	reWhen          = regexp.MustCompile(`(?is)\bWHEN\s*\(`)
	reSpace         = regexp.MustCompile(`\s+`)
	reDefiner       = regexp.MustCompile(`(?is)\bSECURITY\s+DEFINER\b`)
)

// loadManifest reads the Up sections of the embedded migrations in order.
func loadManifest() (guardManifest, error) {
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		return guardManifest{}, err
	}
	sort.Strings(names)
	var ups []string
	for _, n := range names {
		b, err := fs.ReadFile(migrations.FS, n)
		if err != nil {
			return guardManifest{}, err
		}
		ups = append(ups, upSection(string(b)))
	}
	return parseManifest(ups)
}

// upSection is the part of a goose migration between its Up and Down
// markers.
func upSection(s string) string {
	if i := strings.Index(s, "-- +goose Up"); i >= 0 {
		s = s[i:]
	}
	if i := strings.Index(s, "-- +goose Down"); i >= 0 {
		s = s[:i]
	}
	return s
}

// parseManifest builds the manifest from Up sections in migration order.
func parseManifest(ups []string) (guardManifest, error) {
	type trigKey struct{ table, name string }
	triggers := map[trigKey]guardTrigger{}
	var order []trigKey
	bodies := map[string]map[string]string{} // name → signature → body
	definer := map[string]bool{}
	for _, up := range ups {
		up = blankComments(up)
		for _, ev := range functionEvents(up) {
			if ev.drop {
				delete(bodies, ev.name)
				delete(definer, ev.name)
				continue
			}
			definer[ev.name] = ev.definer
			if bodies[ev.name] == nil {
				bodies[ev.name] = map[string]string{}
			}
			bodies[ev.name][ev.signature] = ev.body
		}
		for _, stmt := range strings.Split(stripBodies(up), ";") {
			if m := reDropTrigger.FindStringSubmatch(stmt); m != nil {
				delete(triggers, trigKey{strings.ToLower(m[2]), strings.ToLower(m[1])})
				continue
			}
			m := reCreateTrigger.FindStringSubmatch(stmt)
			if m == nil {
				continue
			}
			t, err := triggerFrom(m)
			if err != nil {
				return guardManifest{}, err
			}
			k := trigKey{t.Table, t.Name}
			if _, ok := triggers[k]; !ok {
				order = append(order, k)
			}
			triggers[k] = t
		}
	}
	m := guardManifest{Bodies: map[string][]string{}, Definer: definer}
	for _, k := range order {
		if t, ok := triggers[k]; ok {
			m.Triggers = append(m.Triggers, t)
		}
	}
	for name, sigs := range bodies {
		for _, b := range sigs {
			m.Bodies[name] = append(m.Bodies[name], b)
		}
		sort.Strings(m.Bodies[name])
	}
	return m, nil
}

func triggerFrom(m []string) (guardTrigger, error) {
	t := guardTrigger{Name: strings.ToLower(m[1]), Table: strings.ToLower(m[4]), Function: strings.ToLower(m[6])}
	switch timing := strings.ToUpper(reSpace.ReplaceAllString(m[2], " ")); timing {
	case "BEFORE":
		t.Type |= tgBefore
	case "INSTEAD OF":
		t.Type |= tgInstead
	}
	for _, ev := range strings.Split(strings.ToUpper(m[3]), " OR ") {
		switch strings.Fields(ev)[0] {
		case "INSERT":
			t.Type |= tgInsert
		case "UPDATE":
			t.Type |= tgUpdate
		case "DELETE":
			t.Type |= tgDelete
		case "TRUNCATE":
			t.Type |= tgTruncate
		default:
			return t, fmt.Errorf("ledger: migrations: trigger %s: unknown event %q", t.Name, ev)
		}
	}
	if f := reForEach.FindStringSubmatch(m[5]); f != nil && strings.EqualFold(f[1], "ROW") {
		t.Type |= tgRow
	}
	t.HasWhen = reWhen.MatchString(m[5])
	return t, nil
}

// functionEvent is one CREATE or DROP FUNCTION in a migration.
type functionEvent struct {
	name, signature, body string
	drop, definer         bool
}

// functionEvents finds the functions an Up section creates (with their
// dollar-quoted bodies) or drops, in order. Only statements of the
// migration itself count: a function created by dynamic SQL inside a DO
// block has a body no text shows, and is not compared. Nor is a function
// whose body is not dollar-quoted (BEGIN ATOMIC).
func functionEvents(up string) []functionEvent {
	type pos struct {
		at int
		ev functionEvent
	}
	var found []pos
	code := stripBodies(up) // same offsets as up
	for _, loc := range reCreateFunc.FindAllStringSubmatchIndex(code, -1) {
		name := strings.ToLower(up[loc[2]:loc[3]])
		rest := up[loc[1]:]
		tag := reDollarTag.FindStringIndex(rest)
		if tag == nil || strings.Contains(rest[:tag[0]], ";") {
			continue
		}
		open := rest[tag[0]:tag[1]]
		bodyStart := tag[1]
		end := strings.Index(rest[bodyStart:], open)
		if end < 0 {
			continue
		}
		// The function's attributes come before its body or after it, up
		// to the end of the statement.
		trailer := code[loc[1]+bodyStart+end+len(open):]
		if i := strings.Index(trailer, ";"); i >= 0 {
			trailer = trailer[:i]
		}
		definer := reDefiner.MatchString(rest[:tag[0]]) || reDefiner.MatchString(trailer)
		sig := rest[:tag[0]]
		if i := strings.Index(sig, ")"); i >= 0 {
			sig = sig[:i]
		}
		sig = strings.ToLower(reSpace.ReplaceAllString(sig, ""))
		found = append(found, pos{loc[0], functionEvent{name: name, signature: sig, body: rest[bodyStart : bodyStart+end], definer: definer}})
	}
	for _, loc := range reDropFunc.FindAllStringSubmatchIndex(code, -1) {
		found = append(found, pos{loc[0], functionEvent{name: strings.ToLower(code[loc[2]:loc[3]]), drop: true}})
	}
	// stripBodies keeps offsets, so creates and drops sort into one order.
	sort.SliceStable(found, func(i, j int) bool { return found[i].at < found[j].at })
	out := make([]functionEvent, len(found))
	for i, f := range found {
		out[i] = f.ev
	}
	return out
}

// blankComments blanks out -- comments outside dollar-quoted text, keeping
// the text's length. Comments inside a function body stay: prosrc holds
// them too.
func blankComments(s string) string {
	b := []byte(s)
	for i := 0; i < len(b); {
		if b[i] == '$' {
			if loc := reDollarTagHere.FindIndex(b[i:]); loc != nil {
				open := string(b[i : i+loc[1]])
				end := strings.Index(string(b[i+loc[1]:]), open)
				if end < 0 {
					return string(b)
				}
				i += loc[1] + end + len(open)
				continue
			}
		}
		if b[i] == '-' && i+1 < len(b) && b[i+1] == '-' {
			for ; i < len(b) && b[i] != '\n'; i++ {
				b[i] = ' '
			}
			continue
		}
		i++
	}
	return string(b)
}

// stripBodies blanks out dollar-quoted text (function bodies, DO blocks),
// keeping its length, so that statements inside a body are not read as the
// migration's own.
func stripBodies(s string) string {
	b := []byte(s)
	i := 0
	for {
		loc := reDollarTag.FindIndex(b[i:])
		if loc == nil {
			return string(b)
		}
		open := string(b[i+loc[0] : i+loc[1]])
		start := i + loc[1]
		end := strings.Index(string(b[start:]), open)
		if end < 0 {
			return string(b)
		}
		for k := start; k < start+end; k++ {
			if b[k] != '\n' {
				b[k] = ' '
			}
		}
		i = start + end + len(open)
	}
}
