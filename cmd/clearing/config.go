package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clearing-dev/clearing/internal/output"
	"github.com/clearing-dev/clearing/internal/settings"
)

func newConfigCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Read and change settings kept in the database",
		Long: `Settings live in the database, per tenant, so that no command-line flag can
override them. Only an admin role (the owner of the schema, the role that ran
'clearing migrate') may change them; the database itself refuses other roles.

Settings:
  ` + settings.FourEyesAboveMinor + `  corrections above this amount, in minor
      units of their currency, need two different operators (default 100000)`,
	}
	get := &cobra.Command{
		Use:     "get [KEY]",
		Short:   "Show settings and where their values come from",
		Example: `  clearing config get ` + settings.FourEyesAboveMinor,
		Args:    cobra.MaximumNArgs(1),
		RunE: g.run(func(ctx context.Context, args []string) error {
			d, err := g.open(ctx, false)
			if err != nil {
				return err
			}
			defer d.Close(ctx)
			keys := settings.Keys()
			if len(args) == 1 {
				keys = args
			}
			var out []settings.Setting
			rows := output.Rows{Header: []string{"key", "value", "set by", "meaning"}}
			for _, k := range keys {
				s, err := settings.Get(ctx, d.pool, g.tenant, k)
				if err != nil {
					return usageError{err}
				}
				by := s.SetBy
				if s.Default {
					by = "(default)"
				}
				rows.Add(s.Key, s.Value, by, s.Doc)
				out = append(out, s)
			}
			return output.Write(g.stdout, g.output, out, rows)
		}),
	}
	set := &cobra.Command{
		Use:     "set KEY VALUE",
		Short:   "Change a setting (admin role only)",
		Example: `  clearing config set ` + settings.FourEyesAboveMinor + ` 50000`,
		Args:    cobra.ExactArgs(2),
		RunE: g.run(func(ctx context.Context, args []string) error {
			d, err := g.open(ctx, false)
			if err != nil {
				return err
			}
			defer d.Close(ctx)
			s, err := settings.Set(ctx, d.pool, g.tenant, args[0], strings.TrimSpace(args[1]))
			if err != nil {
				return err
			}
			rows := output.Rows{Header: []string{"key", "value", "set by"}}
			rows.Add(s.Key, s.Value, s.SetBy)
			return output.Write(g.stdout, g.output, s, rows)
		}),
	}
	cmd.AddCommand(get, set)
	return cmd
}
