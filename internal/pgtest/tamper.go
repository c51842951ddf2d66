package pgtest

import (
	"context"
	"fmt"
	"regexp"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Tests that prove `ledger verify` finds tampering get past the ledger's
// triggers first, the way someone with the schema owner's login would: on
// one PostgreSQL with ALTER TABLE ... DISABLE TRIGGER, or in the
// replication role. On Citus the triggers that refuse a change fire on the
// shards, and Citus passes neither on to them: it refuses ALTER TABLE ...
// TRIGGER on a distributed table without citus.enable_unsafe_triggers,
// passes it on without the TRUNCATE triggers with it, and keeps SET LOCAL
// to the coordinator. The helpers here do on a Citus coordinator what the
// statements do on one PostgreSQL.

// triggerActions are the forms of ALTER TABLE ... TRIGGER that AlterTrigger
// takes.
var triggerActions = map[string]bool{"DISABLE": true, "ENABLE": true, "ENABLE REPLICA": true, "ENABLE ALWAYS": true}

var identifier = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// AlterTrigger does what `ALTER TABLE table action TRIGGER trigger` does:
// action is DISABLE, ENABLE, ENABLE REPLICA or ENABLE ALWAYS, trigger a
// trigger's name or ALL. On a Citus coordinator it alters the
// coordinator's table without passing the statement on (there ALL is
// USER: Citus's own truncate trigger, which takes a TRUNCATE to the
// shards, stays), and then every shard placement of the table, where the
// trigger's name carries the shard's id. It runs outside any transaction
// of the caller's: the placements are altered over connections of their
// own, which would wait for the locks such a transaction holds.
func AlterTrigger(t testing.TB, pool *pgxpool.Pool, table, action, trigger string) {
	t.Helper()
	if !triggerActions[action] || !identifier.MatchString(table) || trigger != "ALL" && !identifier.MatchString(trigger) {
		t.Fatalf("pgtest: AlterTrigger(%q, %q, %q): not a table, an action and a trigger it takes", table, action, trigger)
	}
	ctx := context.Background()
	stmt := fmt.Sprintf("ALTER TABLE %s %s TRIGGER %s", table, action, trigger)
	if !Citus(t) {
		if _, err := pool.Exec(ctx, stmt); err != nil {
			t.Fatalf("pgtest: %s: %v", stmt, err)
		}
		return
	}
	local := stmt
	if trigger == "ALL" {
		local = fmt.Sprintf("ALTER TABLE %s %s TRIGGER USER", table, action)
	}
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL citus.enable_ddl_propagation = off`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, local)
		return err
	})
	if err != nil {
		t.Fatalf("pgtest: %s on the coordinator: %v", local, err)
	}
	// run_command_on_placements puts each shard's name in for %1$s.
	shard := `ALTER TABLE %1$s ` + action + ` TRIGGER ALL`
	if trigger != "ALL" {
		shard = `DO $alter$ BEGIN EXECUTE format('ALTER TABLE %%s ` + action + ` TRIGGER %%I', '%1$s'::regclass, '` +
			trigger + `' || substring('%1$s' from '_[0-9]+$')); END $alter$`
	}
	rows, err := pool.Query(ctx, `SELECT shardid, success, result FROM run_command_on_placements($1::regclass, $2)`, table, shard)
	if err != nil {
		t.Fatalf("pgtest: %s on the shards: %v", stmt, err)
	}
	type placement struct {
		Shard   int64
		Success bool
		Result  string
	}
	ps, err := pgx.CollectRows(rows, pgx.RowToStructByPos[placement])
	if err != nil {
		t.Fatalf("pgtest: %s on the shards: %v", stmt, err)
	}
	if len(ps) == 0 {
		t.Fatalf("pgtest: %s: %s has no shard placements", stmt, table)
	}
	for _, p := range ps {
		if !p.Success {
			t.Fatalf("pgtest: %s on shard %d: %s", stmt, p.Shard, p.Result)
		}
	}
}

// ReplicationRole returns the statements that put the rest of a
// transaction in the replication role, where no ordinary trigger fires:
// `SET LOCAL session_replication_role = replica`, on a Citus coordinator
// after the setting that passes SET LOCAL on to the connections to the
// shards, where the triggers fire.
func ReplicationRole(t testing.TB) []string {
	t.Helper()
	set := []string{`SET LOCAL session_replication_role = replica`}
	if Citus(t) {
		set = append([]string{`SET LOCAL citus.propagate_set_commands = 'local'`}, set...)
	}
	return set
}
