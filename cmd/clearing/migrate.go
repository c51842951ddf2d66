package main

import (
	"context"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/clearing-dev/clearing/internal/output"
	"github.com/clearing-dev/clearing/internal/schema"
)

func newMigrateCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Apply the embedded schema migrations (safe to run again)",
		Long: `Apply the schema migrations built into this binary to the database. Migrations
already applied are skipped, so running it again changes nothing; concurrent runs
wait for each other on a lock. The embedded cluster is migrated automatically.`,
		Example: `  clearing migrate --database-url postgres://clearing@db/clearing`,
		Args:    cobra.NoArgs,
		RunE: g.run(func(ctx context.Context, _ []string) error {
			return runMigrate(ctx, g)
		}),
	}
}

func runMigrate(ctx context.Context, g *globalOptions) error {
	d, err := g.open(ctx, true)
	if err != nil {
		return err
	}
	defer d.Close(ctx)
	ms, err := schema.Migrate(ctx, d.pool, g.log)
	if err != nil {
		return err
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
