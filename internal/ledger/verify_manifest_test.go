package ledger

import (
	"slices"
	"testing"
)

// The manifest read from the embedded migrations guards at least the
// tables the ledger's promise rests on, with the seal triggers on the
// sealed ones: a parser that silently read less would make verify check
// less.
func TestManifestGuardsTheLedgerTables(t *testing.T) {
	m, err := loadManifest()
	if err != nil {
		t.Fatal(err)
	}
	protected := m.Protected()
	for _, table := range []string{"postings", "legs", "notices", "audit_events", "statement_lines", "correction_decisions", "seals"} {
		if !slices.Contains(protected, table) {
			t.Errorf("%s is not protected by clearing_reject_change in the manifest: %v", table, protected)
		}
	}
	want := map[string]int16{
		"postings_append_only": tgRow | tgBefore | tgUpdate | tgDelete,
		"postings_no_truncate": tgBefore | tgTruncate,
		"legs_balance":         tgInsert,
		"postings_seal":        tgInsert,
		"audit_events_seal":    tgInsert,
	}
	for name, typ := range want {
		i := slices.IndexFunc(m.Triggers, func(tr guardTrigger) bool { return tr.Name == name })
		if i < 0 || m.Triggers[i].Type != typ {
			t.Errorf("trigger %s: %+v, want type %d", name, m.Triggers, typ)
		}
	}
	for _, f := range []string{"clearing_reject_change", "clearing_check_legs", "clearing_seal", "clearing_seal_hash_postings"} {
		if len(m.Bodies[f]) == 0 {
			t.Errorf("no body for %s", f)
		}
	}
}

func TestManifestFollowsTheMigrationsInOrder(t *testing.T) {
	m, err := parseManifest([]string{`
-- CREATE TRIGGER commented_out BEFORE DELETE ON t FOR EACH ROW EXECUTE FUNCTION f();
CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- CREATE TRIGGER inside_a_body BEFORE DELETE ON t FOR EACH ROW EXECUTE FUNCTION f();
    RAISE EXCEPTION 'no';
END;
$$;
CREATE TRIGGER t_guard BEFORE UPDATE OR DELETE ON t FOR EACH ROW EXECUTE FUNCTION f();
CREATE TRIGGER t_gone AFTER INSERT ON t FOR EACH STATEMENT EXECUTE FUNCTION f();
DO $do$
BEGIN
    EXECUTE $x$CREATE FUNCTION dynamic() RETURNS int LANGUAGE sql AS $b$ SELECT 1 $b$$x$;
END
$do$;
`, `
CREATE OR REPLACE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $body$ BEGIN RETURN NULL; END; $body$;
CREATE FUNCTION g() RETURNS trigger AS $$ BEGIN RETURN NULL; END; $$ LANGUAGE plpgsql SECURITY DEFINER;
DROP TRIGGER t_gone ON t;
CREATE TRIGGER u_guard BEFORE TRUNCATE ON u EXECUTE PROCEDURE f();
`})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tr := range m.Triggers {
		names = append(names, tr.Name)
	}
	if !slices.Equal(names, []string{"t_guard", "u_guard"}) {
		t.Fatalf("triggers %v, want t_guard and u_guard", names)
	}
	if m.Triggers[0].Type != tgRow|tgBefore|tgUpdate|tgDelete || m.Triggers[1].Type != tgBefore|tgTruncate {
		t.Fatalf("types: %+v", m.Triggers)
	}
	if got := m.Bodies["f"]; len(got) != 1 || got[0] != " BEGIN RETURN NULL; END; " {
		t.Fatalf("f's body is %q, want the later migration's", got)
	}
	if m.Definer["f"] || !m.Definer["g"] {
		t.Fatalf("SECURITY DEFINER read as %v, want g only", m.Definer)
	}
	if _, ok := m.Bodies["dynamic"]; ok {
		t.Fatal("a function created by dynamic SQL entered the manifest")
	}
}
