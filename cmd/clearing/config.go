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
  ` + settings.FourEyesAbovePrefix + `<CURRENCY>  the four-eyes threshold of one
      ISO 4217 currency, in major units: a correction above it needs two
      different approver logins and two different people, one up to it needs
      one. A currency without a threshold needs two for every correction.
      ` + settings.FourEyesAbove("USD") + ` 1000 is 1,000.00 USD;
      ` + settings.FourEyesAbove("JPY") + ` 150000 is 150,000 JPY.

` + settings.RetiredFourEyesAboveMinor + ` (one number in minor units of every
currency) is retired: migration 00007 moved a tenant's value to each
currency of its corrections.`,
	}
	get := &cobra.Command{
		Use:   "get [KEY]",
		Short: "Show settings and where their values come from",
		Example: `  clearing config get
  clearing config get ` + settings.FourEyesAbove("EUR"),
		Args: cobra.MaximumNArgs(1),
		RunE: g.run(func(ctx context.Context, args []string) error {
			d, err := g.open(ctx, false)
			if err != nil {
				return err
			}
			defer d.Close(ctx)
			var out []settings.Setting
			if len(args) == 1 {
				s, err := settings.Get(ctx, d.pool, g.tenant, args[0])
				if err != nil {
					return usageError{err}
				}
				out = append(out, s)
			} else if out, err = settings.List(ctx, d.pool, g.tenant); err != nil {
				return err
			}
			rows := output.Rows{Header: []string{"key", "value", "set by", "meaning"}}
			if len(out) == 0 {
				rows.Add(settings.FourEyesAbovePrefix+"<CURRENCY>", "", "(not set)",
					"no threshold is set: every correction needs two different operators (logins and people)")
			}
			for _, s := range out {
				by := s.SetBy
				if s.Default {
					by = "(default)"
				}
				rows.Add(s.Key, s.Value, by, s.Doc)
			}
			if out == nil {
				out = []settings.Setting{}
			}
			return output.Write(g.stdout, g.output, out, rows)
		}),
	}
	set := &cobra.Command{
		Use:   "set KEY VALUE",
		Short: "Change a setting (admin role only)",
		Example: `  clearing config set ` + settings.FourEyesAbove("USD") + ` 1000
  clearing config set ` + settings.FourEyesAbove("JPY") + ` 150000`,
		Args: cobra.ExactArgs(2),
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
