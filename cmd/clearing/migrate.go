package main

import (
	"context"
	"log/slog"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/clearing-dev/clearing/internal/output"
	"github.com/clearing-dev/clearing/internal/schema"
)

func newMigrateCommand(g *globalOptions) *cobra.Command {
	var distribute bool
	var shards int
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Apply the embedded schema migrations (safe to run again)",
		Long: `Apply the schema migrations built into this binary to the database. Migrations
already applied are skipped, so running it again changes nothing; concurrent runs
wait for each other on a lock. The embedded cluster is migrated automatically.

With --distribute, on the coordinator of a Citus cluster (the database has the
citus extension and its workers are registered), every tenant table is then
distributed by tenant_id, co-located, and the currency exponents become a
reference table; tables already distributed are left alone, so running it
again changes nothing. Once distributed, a plain migrate distributes the
tables that later migrations add.`,
		Example: `  clearing migrate --database-url postgres://clearing@db/clearing
  clearing migrate --distribute --database-url postgres://clearing@coordinator/clearing`,
		Args: cobra.NoArgs,
		RunE: g.run(func(ctx context.Context, _ []string) error {
			return runMigrate(ctx, g, distribute, shards)
		}),
	}
	cmd.Flags().BoolVar(&distribute, "distribute", false, "distribute the tables over the Citus cluster by tenant (the database needs the citus extension)")
	cmd.Flags().IntVar(&shards, "shard-count", 0, "with --distribute, the shards of each distributed table (0: Citus's citus.shard_count)")
	return cmd
}

func runMigrate(ctx context.Context, g *globalOptions, distribute bool, shards int) error {
	if shards < 0 || (shards > 0 && !distribute) {
		return usagef("--shard-count takes a positive number, with --distribute")
	}
	d, err := g.open(ctx, true)
	if err != nil {
		return err
	}
	defer d.Close(ctx)
	if distribute {
		// Refused before anything is migrated: a database meant for a
		// cluster that has no Citus is a mistake to stop at.
		if ok, err := schema.HasCitus(ctx, d.pool); err != nil {
			return err
		} else if !ok {
			_, err := schema.Distribute(ctx, d.pool, shards)
			return err
		}
	}
	ms, err := schema.Migrate(ctx, d.pool, g.log)
	if err != nil {
		return err
	}
	if distribute {
		ds, err := schema.Distribute(ctx, d.pool, shards)
		if err != nil {
			return err
		}
		for _, t := range ds {
			if t.Changed {
				g.log.Info("table distributed", slog.String("table", t.Table), slog.String("how", t.How))
			}
		}
	}
	rows := output.Rows{Header: []string{"version", "migration", "status"}}
	type item struct {
		Version int64  `json:"version"`
		Name    string `json:"name"`
		Status  string `json:"status"`
	}
	items := []item{}
	for _, m := range ms {
		status := "already applied"
		if m.Applied {
			status = "applied"
		}
		rows.Add(strconv.FormatInt(m.Version, 10), m.Name, status)
		items = append(items, item{m.Version, m.Name, status})
	}
	return output.Write(g.stdout, g.output, items, rows)
}
