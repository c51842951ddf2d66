package ledger

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Names of the checks on the database's own guards.
const (
	checkTriggers  = "append-only triggers are installed and enabled"
	checkFunctions = "trigger functions are the migrations' own"
)

// dbTrigger is a trigger as pg_trigger has it.
type dbTrigger struct {
	Name, Table, Function string
	Type                  int16
	Enabled               string
	SameSchema, HasWhen   bool
}

// triggerQuery lists the triggers on the given tables and the triggers
// bearing the given names wherever they are, in the schema the ledger's
// tables are found in.
const triggerQuery = `
SELECT t.tgname, c.relname, p.proname, t.tgtype, t.tgenabled::text, pn.oid = cn.oid, t.tgqual IS NOT NULL
  FROM pg_trigger t
  JOIN pg_class c ON c.oid = t.tgrelid
  JOIN pg_namespace cn ON cn.oid = c.relnamespace
  JOIN pg_proc p ON p.oid = t.tgfoid
  JOIN pg_namespace pn ON pn.oid = p.pronamespace
 WHERE NOT t.tgisinternal AND cn.nspname = current_schema()
   AND (c.relname = ANY($1) OR t.tgname = ANY($2))
 ORDER BY c.relname, t.tgname`

// verifyGuards checks that every trigger the migrations create is on its
// table, fires when it should, is enabled and calls its function; that the
// guarded tables have no other trigger, no rule and no row-level security;
// and that every function the migrations define still has the body they
// gave it.
func verifyGuards(ctx context.Context, q Querier, m guardManifest) ([]Check, error) {
	triggers := Check{Name: checkTriggers}
	var names []string
	for _, t := range m.Triggers {
		names = append(names, t.Name)
	}
	rows, err := q.Query(ctx, triggerQuery, m.Tables(), names)
	if err != nil {
		return nil, fmt.Errorf("ledger: verify triggers: %w", err)
	}
	var have []dbTrigger
	var t dbTrigger
	if _, err := pgx.ForEachRow(rows, []any{&t.Name, &t.Table, &t.Function, &t.Type, &t.Enabled, &t.SameSchema, &t.HasWhen},
		func() error { have = append(have, t); return nil }); err != nil {
		return nil, fmt.Errorf("ledger: verify triggers: %w", err)
	}
	compareTriggers(&triggers, m, have)
	if err := verifyRules(ctx, q, m, &triggers); err != nil {
		return nil, err
	}
	functions := Check{Name: checkFunctions}
	if err := verifyBodies(ctx, q, m, &functions); err != nil {
		return nil, err
	}
	return []Check{triggers, functions}, nil
}

// compareTriggers adds a finding for each difference between the triggers
// the migrations create and the triggers the database has.
func compareTriggers(c *Check, m guardManifest, have []dbTrigger) {
	expected := map[[2]string]bool{}
	for _, want := range m.Triggers {
		expected[[2]string{want.Table, want.Name}] = true
		i := slices.IndexFunc(have, func(h dbTrigger) bool { return h.Table == want.Table && h.Name == want.Name })
		if i < 0 {
			problem := "is missing"
			var elsewhere []string
			for _, h := range have {
				if h.Name == want.Name {
					elsewhere = append(elsewhere, h.Table)
				}
			}
			if len(elsewhere) > 0 {
				problem = "is missing; a trigger of that name is on " + strings.Join(elsewhere, ", ")
			}
			c.found(want.Table, want.Name, "trigger "+problem)
			continue
		}
		h := have[i]
		var wrong []string
		if h.Enabled != "O" && h.Enabled != "A" {
			state := map[string]string{"D": "disabled", "R": "enabled for replication only"}[h.Enabled]
			wrong = append(wrong, "it is "+state)
		}
		if h.Function != want.Function || !h.SameSchema {
			wrong = append(wrong, fmt.Sprintf("it calls %s, not %s", h.Function, want.Function))
		}
		if h.Type != want.Type {
			wrong = append(wrong, fmt.Sprintf("it fires %s, not %s", describeType(h.Type), describeType(want.Type)))
		}
		if h.HasWhen && !want.HasWhen {
			wrong = append(wrong, "it has a WHEN condition the migrations did not give it")
		}
		if len(wrong) > 0 {
			c.found(want.Table, want.Name, "trigger: "+strings.Join(wrong, "; "))
		}
	}
	guarded := m.Tables()
	for _, h := range have {
		if !expected[[2]string{h.Table, h.Name}] && slices.Contains(guarded, h.Table) {
			c.found(h.Table, h.Name, fmt.Sprintf("trigger no migration created (it calls %s and fires %s)", h.Function, describeType(h.Type)))
		}
	}
}

// describeType writes pg_trigger.tgtype in words: "before update or delete
// for each row".
func describeType(t int16) string {
	timing := "after"
	switch {
	case t&tgBefore != 0:
		timing = "before"
	case t&tgInstead != 0:
		timing = "instead of"
	}
	var events []string
	for _, e := range []struct {
		bit  int16
		name string
	}{{tgInsert, "insert"}, {tgUpdate, "update"}, {tgDelete, "delete"}, {tgTruncate, "truncate"}} {
		if t&e.bit != 0 {
			events = append(events, e.name)
		}
	}
	level := "statement"
	if t&tgRow != 0 {
		level = "row"
	}
	return fmt.Sprintf("%s %s for each %s", timing, strings.Join(events, " or "), level)
}

// verifyRules finds rules (which can turn a DELETE into nothing, or send
// an INSERT elsewhere, before any trigger sees it) and row-level security
// (which can hide rows from verify) on the guarded tables.
func verifyRules(ctx context.Context, q Querier, m guardManifest, c *Check) error {
	rows, err := q.Query(ctx, `
SELECT c.relname, r.rulename, 'rule that rewrites ' || lower(CASE r.ev_type WHEN '1' THEN 'select' WHEN '2' THEN 'update'
                                                  WHEN '3' THEN 'insert' ELSE 'delete' END) || ' statements'
  FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = current_schema() AND c.relname = ANY($1)
UNION ALL
SELECT c.relname, '', 'row-level security is on'
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = current_schema() AND c.relname = ANY($1) AND c.relrowsecurity
 ORDER BY 1, 2`, m.Tables())
	if err != nil {
		return fmt.Errorf("ledger: verify rules: %w", err)
	}
	var table, name, problem string
	_, err = pgx.ForEachRow(rows, []any{&table, &name, &problem}, func() error {
		c.found(table, name, problem)
		return nil
	})
	if err != nil {
		return fmt.Errorf("ledger: verify rules: %w", err)
	}
	return nil
}

// verifyBodies compares the source of every function the migrations define
// with the body they gave it. A function replaced by one that lets changes
// through, or dropped, is a finding.
func verifyBodies(ctx context.Context, q Querier, m guardManifest, c *Check) error {
	rows, err := q.Query(ctx, `
SELECT p.proname, pg_get_function_identity_arguments(p.oid), p.prosrc, p.prosecdef,
       EXISTS (SELECT 1 FROM unnest(p.proconfig) AS c(setting) WHERE c.setting LIKE 'search_path=%')
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname = current_schema() AND p.proname = ANY($1)
 ORDER BY 1, 2`, m.Functions())
	if err != nil {
		return fmt.Errorf("ledger: verify functions: %w", err)
	}
	seen := map[string]bool{}
	var name, args, src string
	var definer, fixedPath bool
	_, err = pgx.ForEachRow(rows, []any{&name, &args, &src, &definer, &fixedPath}, func() error {
		seen[name] = true
		fn := name + "(" + args + ")"
		if !slices.Contains(m.Bodies[name], src) {
			c.found("", fn, "function body differs from the migrations'")
		}
		switch {
		case definer && !m.Definer[name]:
			c.found("", fn, "function runs with its owner's rights (SECURITY DEFINER), which the migrations did not give it")
		case !definer && m.Definer[name]:
			c.found("", fn, "function no longer runs with its owner's rights (SECURITY DEFINER)")
		case definer && !fixedPath:
			c.found("", fn, "function runs with its owner's rights on its caller's search_path")
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("ledger: verify functions: %w", err)
	}
	for _, f := range m.Functions() {
		if !seen[f] {
			c.found("", f, "function is missing")
		}
	}
	return nil
}
