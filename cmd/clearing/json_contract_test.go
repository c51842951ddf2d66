package main

import (
	"bufio"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/clearing-dev/clearing/corrections"
	"github.com/clearing-dev/clearing/ingest"
	"github.com/clearing-dev/clearing/internal/demo"
	"github.com/clearing-dev/clearing/internal/ledger"
	"github.com/clearing-dev/clearing/internal/report"
	"github.com/clearing-dev/clearing/internal/runs"
	"github.com/clearing-dev/clearing/internal/settings"
	"github.com/clearing-dev/clearing/reconcile"
)

// jsonDocs is where every command's JSON fields are documented; the test
// below reads it, so that the page and the output cannot drift apart.
const jsonDocs = "../../docs/json.md"

// reportDocs documents the reconciliation report's document, which
// reconcile and report print.
const reportDocs = "../../docs/report.md"

// snakeCase is what every JSON field name must look like.
var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// docField is one row of an object's table in docs/json.md.
type docField struct {
	name   string
	object string // the object it holds, if any
	array  bool
}

// jsonPage is docs/json.md as the tests read it.
type jsonPage struct {
	prints   map[string]string // command -> the object it prints; "" for the report document
	objects  map[string][]docField
	includes map[string][]string // object -> objects whose every field it has
}

var (
	commandHeading = regexp.MustCompile("^## `clearing ([a-z ]+)`$")
	objectHeading  = regexp.MustCompile("^### ([A-Za-z0-9]+)$")
	objectLink     = regexp.MustCompile(`\[([A-Za-z0-9]+)\]\(#[a-z0-9-]+\)`)
	fieldRow       = regexp.MustCompile("^\\| `([^`]+)` \\| ([^|]*) \\|")
)

// readJSONPage reads docs/json.md: each "## `clearing COMMAND`" section
// names, on its "Prints:" line, the object the command prints (or the
// report document of report.md); each "### Object" section lists the
// object's fields in a table, a field's type linking to the object it
// holds, and "Every field of [Other](#other)" takes another's fields.
func readJSONPage(t *testing.T) jsonPage {
	t.Helper()
	f, err := os.Open(jsonDocs)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	page := jsonPage{prints: map[string]string{}, objects: map[string][]docField{}, includes: map[string][]string{}}
	command, object := "", ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch m, o := commandHeading.FindStringSubmatch(line), objectHeading.FindStringSubmatch(line); {
		case m != nil:
			command, object = m[1], ""
			continue
		case o != nil:
			command, object = "", o[1]
			page.objects[object] = []docField{}
			continue
		case strings.HasPrefix(line, "#"):
			command, object = "", ""
			continue
		}
		switch {
		case command != "" && strings.HasPrefix(line, "Prints:"):
			if m := objectLink.FindStringSubmatch(line); m != nil {
				page.prints[command] = m[1]
			} else if strings.Contains(line, "report.md") {
				page.prints[command] = ""
			} else {
				t.Fatalf("%s: %q names no object", jsonDocs, line)
			}
		case object != "" && strings.HasPrefix(line, "Every field of "):
			for _, m := range objectLink.FindAllStringSubmatch(line, -1) {
				page.includes[object] = append(page.includes[object], m[1])
			}
		case object != "":
			if m := fieldRow.FindStringSubmatch(line); m != nil {
				fd := docField{name: m[1], array: strings.HasPrefix(m[2], "array of")}
				if l := objectLink.FindStringSubmatch(m[2]); l != nil {
					fd.object = l[1]
				}
				page.objects[object] = append(page.objects[object], fd)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return page
}

// paths returns the documented path of every field a command prints, as
// jsonPaths names them, and whether it prints the report document.
func (p jsonPage) paths(t *testing.T, command string) (paths map[string]bool, isReport bool) {
	t.Helper()
	root, ok := p.prints[command]
	if !ok {
		t.Fatalf("%s has no section \"## `clearing %s`\" with a Prints: line", jsonDocs, command)
	}
	if root == "" {
		return nil, true
	}
	paths = map[string]bool{}
	var expand func(object, prefix string, depth int)
	expand = func(object, prefix string, depth int) {
		fields, ok := p.objects[object]
		if !ok || depth > 8 {
			t.Fatalf("%s: object %q is not described (or holds itself)", jsonDocs, object)
		}
		for _, inc := range p.includes[object] {
			expand(inc, prefix, depth+1)
		}
		for _, f := range fields {
			paths[prefix+f.name] = true
			if f.object == "" {
				continue
			}
			sep := "."
			if f.array {
				sep = "[]."
			}
			expand(f.object, prefix+f.name+sep, depth+1)
		}
	}
	expand(root, "", 0)
	return paths, false
}

// reportFields reads the field names of every table in docs/report.md's
// JSON section.
func reportFields(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(reportDocs)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## JSON\n")
	if !ok {
		t.Fatalf("%s has no JSON section", reportDocs)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	field := regexp.MustCompile("(?m)^\\| `([a-z0-9_]+)` \\|")
	out := map[string]bool{}
	for _, m := range field.FindAllStringSubmatch(section, -1) {
		out[m[1]] = true
	}
	return out
}

// jsonPaths adds the path of every key in v to out: "a" for a top-level
// key (of the object, or of each element of a top-level array), "a.b" for
// a key of an object under a, "a[].b" for a key of the objects in array a.
func jsonPaths(v any, prefix string, out map[string]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			out[prefix+k] = true
			jsonPaths(e, prefix+k+".", out)
		}
	case []any:
		p := strings.TrimSuffix(prefix, ".")
		if p != "" {
			p += "[]."
		}
		for _, e := range v {
			jsonPaths(e, p, out)
		}
	}
}

// Every command that takes -o json prints only snake_case field names, and
// only fields that docs/json.md lists for it.
func TestEveryCommandsJSONIsSnakeCaseAndDocumented(t *testing.T) {
	t.Parallel()
	page := readJSONPage(t)
	report := reportFields(t)
	c := newCLI(t)
	dir := filepath.Join(c.dir, "demo")
	outputs := map[string][]string{} // command -> its JSON outputs
	js := func(command string, want []int, args ...string) string {
		t.Helper()
		r := c.run(append([]string{"-o", "json"}, args...)...)
		if !slices.Contains(want, r.code) {
			t.Fatalf("want exit %v\n%v", want, r)
		}
		outputs[command] = append(outputs[command], r.stdout)
		return r.stdout
	}
	ok, attention, failed := []int{0}, []int{0, 3}, []int{1}

	js("generate demo", ok, "generate", "demo", dir)
	keys := map[string]string{}
	env, err := os.ReadFile(filepath.Join(dir, "keys.env"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(env)), "\n") {
		k, v, _ := strings.Cut(l, "=")
		keys[k] = v
	}
	js("migrate", ok, "migrate")
	js("ingest", ok, "ingest", filepath.Join(dir, "day1.ach"))
	js("ingest", ok, "ingest", "--dry-run", filepath.Join(dir, "day1-corrected.ach"))
	js("ingest", ok, "ingest", filepath.Join(dir, "day1-corrected.ach"))
	var restated []ingestSummary
	if err := json.Unmarshal([]byte(js("ingest", attention, "ingest", filepath.Join(dir, "day1-restated.ach"))), &restated); err != nil {
		t.Fatal(err)
	}
	js("ingest", ok, "ingest", filepath.Join(dir, "returns.ach"))
	var rejected []ingestSummary
	if err := json.Unmarshal([]byte(js("ingest", failed, "ingest", filepath.Join(dir, "keys.env"))), &rejected); err != nil {
		t.Fatal(err)
	}
	js("statement import", ok, "statement", "import", "--source", "ach", filepath.Join(dir, "statement.bai2"))
	js("statement import", failed, "statement", "import", "--source", "ach", filepath.Join(dir, "keys.env"))
	js("reconcile", attention, "reconcile", "--source", "ach", "--from", keys["FROM"], "--to", keys["TO"])
	js("report", attention, "report", "latest")
	js("runs", ok, "runs")
	js("runs show", ok, "runs", "show", strconv.FormatInt(restated[0].RunID, 10))
	js("runs show", ok, "runs", "show", strconv.FormatInt(rejected[0].RunID, 10))
	js("lookup", ok, "lookup", keys["RETURNED_KEY"])
	js("lookup", ok, "lookup", keys["CHANGED_KEY"])
	js("balance", ok, "balance")
	js("balance", ok, "balance", "--by-kind")
	js("ledger verify", ok, "ledger", "verify")
	js("config set", ok, "config", "set", "corrections.four_eyes_above.USD", "100")
	js("config get", ok, "config", "get")

	var proposed []struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal([]byte(js("corrections list", ok, "corrections", "list", "--status", "proposed")), &proposed); err != nil {
		t.Fatal(err)
	}
	if len(proposed) < 2 {
		t.Fatalf("the demo proposes %d corrections, want at least 2", len(proposed))
	}
	alice := *c
	alice.url, _ = c.loginURL("alice", "clearing_approver")
	for _, step := range []struct {
		command string
		args    []string
	}{
		{"corrections approve", []string{"corrections", "approve", strconv.FormatInt(proposed[0].ID, 10), "--operator", "Alice", "--reason", "checked"}},
		{"corrections reject", []string{"corrections", "reject", strconv.FormatInt(proposed[1].ID, 10), "--operator", "Alice", "--reason", "refunded"}},
	} {
		r := alice.run(append([]string{"-o", "json"}, step.args...)...)
		if r.code != 0 && r.code != 3 {
			t.Fatalf("want exit 0\n%v", r)
		}
		outputs[step.command] = append(outputs[step.command], r.stdout)
	}
	for _, id := range proposed[:2] {
		js("corrections show", ok, "corrections", "show", strconv.FormatInt(id.ID, 10))
	}
	js("corrections list", ok, "corrections", "list")

	for command, docs := range outputs {
		t.Run(command, func(t *testing.T) {
			fields, isReport := page.paths(t, command)
			seen := map[string]bool{}
			for _, doc := range docs {
				var v any
				if err := json.Unmarshal([]byte(doc), &v); err != nil {
					t.Fatalf("not JSON: %v\n%s", err, doc)
				}
				jsonPaths(v, "", seen)
			}
			if len(seen) == 0 {
				t.Fatalf("no field in its JSON: %q", docs)
			}
			for _, p := range slices.Sorted(maps.Keys(seen)) {
				segments := strings.Split(strings.ReplaceAll(p, "[]", ""), ".")
				for _, s := range segments {
					if !snakeCase.MatchString(s) {
						t.Errorf("field %s: %q is not snake_case", p, s)
					}
				}
				name := segments[len(segments)-1]
				if !fields[p] && !(isReport && report[name]) {
					t.Errorf("field %s is not documented in %s", p, jsonDocs)
				}
			}
		})
	}
}

// jsonTypes are the Go types each command renders as JSON. Where a command
// builds its document in place (lookup, migrate), the type here is a copy
// of it; the test above checks what the command really prints.
var jsonTypes = map[string]any{
	"ingest":    []ingest.Summary{},
	"runs":      []runs.Run{},
	"runs show": runDetail{},
	"lookup": struct {
		ledger.Lookup
		Reconciliation reconcile.Status `json:"reconciliation"`
	}{},
	"balance":             []ledger.Balance{},
	"ledger verify":       ledger.Verification{},
	"statement import":    []ingest.StatementSummary{},
	"reconcile":           report.Report{},
	"report":              report.Report{},
	"corrections list":    []corrections.Correction{},
	"corrections show":    corrections.Correction{},
	"corrections approve": []corrections.Approval{},
	"corrections reject":  corrections.Correction{},
	"breaks list":         []reconcile.Break{},
	"breaks show":         []reconcile.Break{},
	"breaks ack":          []reconcile.Break{},
	"returns":             []returnAction{},
	"quarantine list":     []ledger.Held{},
	"quarantine show":     []ledger.Held{},
	"quarantine release":  []ledger.Resolution{},
	"quarantine dismiss":  []ledger.Resolution{},
	"quarantine suspense": []corrections.SuspenseProposal{},
	"config get":          []settings.Setting{},
	"config set":          settings.Setting{},
	"generate demo":       demo.Scenario{},
	"migrate": []struct {
		Version int64  `json:"version"`
		Name    string `json:"name"`
		Status  string `json:"status"`
	}{},
}

// noJSON are the commands that write a file, not a result: -o does not
// apply to them.
var noJSON = []string{"generate ach", "generate iso8583", "generate csv", "generate bai2", "generate camt", "generate mt940", "generate ipm", "help", "man"}

var (
	timeType      = reflect.TypeFor[time.Time]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
)

// typePaths adds to out the path of every field that encoding/json would
// write for a value of type t, as jsonPaths names them, and to untagged
// every field whose name comes from Go rather than from a json tag.
func typePaths(t reflect.Type, prefix string, out map[string]bool, untagged *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == timeType || t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) {
		return
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return // bytes are a string
		}
		p := strings.TrimSuffix(prefix, ".")
		if p != "" {
			p += "[]."
		}
		typePaths(t.Elem(), p, out, untagged)
	case reflect.Map:
		*untagged = append(*untagged, prefix+"* (a map: its keys are data, not documented names)")
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" || (!f.IsExported() && !f.Anonymous) {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" {
				typePaths(f.Type, prefix, out, untagged)
				continue
			}
			if name == "" {
				name = f.Name
				*untagged = append(*untagged, prefix+f.Name)
			}
			out[prefix+name] = true
			typePaths(f.Type, prefix+name+".", out, untagged)
		}
	}
}

// Every field of every type a command renders as JSON has a snake_case
// json tag, and docs/json.md lists exactly those fields for the command:
// none missing, none that the command cannot print.
func TestEveryJSONTypeIsTaggedAndDocumented(t *testing.T) {
	page := readJSONPage(t)
	report := reportFields(t)
	for command := range page.prints {
		if _, ok := jsonTypes[command]; !ok {
			t.Errorf("%s documents %q, which this test has no type for", jsonDocs, command)
		}
	}
	// Every command that does something is here, but those that write a
	// file rather than print a result.
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
		path := strings.TrimPrefix(cmd.CommandPath(), "clearing ")
		if !cmd.Runnable() || !cmd.HasParent() || cmd.Annotations[groupOnly] != "" || slices.Contains(noJSON, path) ||
			strings.HasPrefix(path, "completion") {
			return
		}
		if _, ok := jsonTypes[path]; !ok {
			t.Errorf("clearing %s: its JSON is neither checked here nor documented in %s", path, jsonDocs)
		}
	}
	walk(newRootCommand(&globalOptions{}))
	for command, v := range jsonTypes {
		t.Run(command, func(t *testing.T) {
			documented, isReport := page.paths(t, command)
			paths, untagged := map[string]bool{}, []string(nil)
			typePaths(reflect.TypeOf(v), "", paths, &untagged)
			for _, f := range untagged {
				t.Errorf("field %s has no json tag", f)
			}
			for _, p := range slices.Sorted(maps.Keys(paths)) {
				segments := strings.Split(strings.ReplaceAll(p, "[]", ""), ".")
				for _, s := range segments {
					if !snakeCase.MatchString(s) {
						t.Errorf("field %s: %q is not snake_case", p, s)
					}
				}
				name := segments[len(segments)-1]
				if isReport {
					if !report[name] {
						t.Errorf("field %s is not documented in %s", p, reportDocs)
					}
				} else if !documented[p] {
					t.Errorf("field %s is not documented in %s", p, jsonDocs)
				}
			}
			for p := range documented {
				if !paths[p] {
					t.Errorf("%s documents %s, which %s does not print", jsonDocs, p, command)
				}
			}
		})
	}
}
