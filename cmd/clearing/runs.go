package main

import (
	"context"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clearing-dev/clearing/internal/ledger"
	"github.com/clearing-dev/clearing/internal/output"
	"github.com/clearing-dev/clearing/internal/runs"
)

func newRunsCommand(g *globalOptions) *cobra.Command {
	limit := 50
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List ingest and import runs with their counts",
		Long: `List runs, newest first. A run is one file's ingest or statement import. Its
status is done, running (a live process owns it), interrupted (nobody owns it;
ingesting the same file again resumes it) or rejected (the file was refused
whole and nothing from it was written; 'clearing runs show RUN' says why).`,
		Example: `  clearing runs
  clearing runs --limit 5 -o json
  clearing runs show 42`,
		Args: cobra.NoArgs,
		RunE: g.run(func(ctx context.Context, _ []string) error {
			return runRunsList(ctx, g, limit)
		}),
	}
	cmd.Flags().IntVar(&limit, "limit", limit, "most runs to list")
	cmd.AddCommand(newRunsShowCommand(g))
	return cmd
}

func runRunsList(ctx context.Context, g *globalOptions, limit int) error {
	d, err := g.open(ctx, false)
	if err != nil {
		return err
	}
	defer d.Close(ctx)
	rs, err := runs.List(ctx, d.pool, g.tenant, limit)
	if err != nil {
		return err
	}
	for i := range rs {
		rs[i].Errors = operatorTexts(rs[i].Errors)
	}
	rows := output.Rows{Header: []string{"run", "kind", "format", "source", "file", "status", "started",
		"records", "posted", "duplicates", "conflicts", "quarantined", "notices"}}
	for _, r := range rs {
		rows.Add(itoa(r.ID), r.Kind, r.Format, r.Source, r.FileName, r.Status, r.StartedAt.Format("2006-01-02 15:04:05"),
			itoa(r.Records), itoa(r.Posted), itoa(r.Duplicates), itoa(r.Conflicts), itoa(r.Quarantined), itoa(r.Notices))
	}
	if rs == nil {
		rs = []runs.Run{}
	}
	return output.Write(g.stdout, g.output, rs, rows)
}

func newRunsShowCommand(g *globalOptions) *cobra.Command {
	limit := 100
	cmd := &cobra.Command{
		Use:   "show RUN",
		Short: "Show one run and the records it did not post",
		Example: `  clearing runs show 42
  clearing runs show 42 -o json | jq '.events[] | select(.needs_attention)'`,
		Args: cobra.ExactArgs(1),
		RunE: g.run(func(ctx context.Context, args []string) error {
			id, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil {
				return usagef("run id %q is not a number", args[0])
			}
			return runRunsShow(ctx, g, id, limit)
		}),
	}
	cmd.Flags().IntVar(&limit, "limit", limit, "most audit events to list")
	return cmd
}

// runDetail is what 'runs show -o json' prints: the run, and the records
// it did not post.
type runDetail struct {
	runs.Run
	Events []ledger.Event `json:"events"`
}

func runRunsShow(ctx context.Context, g *globalOptions, id int64, limit int) error {
	d, err := g.open(ctx, false)
	if err != nil {
		return err
	}
	defer d.Close(ctx)
	r, err := runs.Get(ctx, d.pool, g.tenant, id)
	if err != nil {
		return err
	}
	r.Errors = operatorTexts(r.Errors)
	events, err := ledger.RunEvents(ctx, d.pool, g.tenant, id, limit)
	if err != nil {
		return err
	}
	if g.output == output.JSON {
		return output.WriteJSON(g.stdout, runDetail{r, events})
	}
	rows := output.Rows{Header: []string{"field", "value"}}
	rows.Add("run", itoa(r.ID))
	rows.Add("kind", r.Kind)
	rows.Add("format", r.Format)
	rows.Add("source", r.Source)
	rows.Add("file", r.FileName)
	rows.Add("bytes", itoa(r.FileBytes))
	if r.FileSHA256 != nil {
		rows.Add("sha256", hex.EncodeToString(r.FileSHA256))
	}
	rows.Add("status", r.Status)
	rows.Add("started", r.StartedAt.Format("2006-01-02 15:04:05 MST"))
	if r.FinishedAt != nil {
		rows.Add("finished", r.FinishedAt.Format("2006-01-02 15:04:05 MST"))
	}
	for _, kv := range [][2]any{{"records", r.Records}, {"posted", r.Posted}, {"duplicates", r.Duplicates},
		{"conflicts", r.Conflicts}, {"quarantined", r.Quarantined}, {"notices", r.Notices}, {"skipped", r.Skipped}} {
		rows.Add(kv[0].(string), itoa(kv[1].(int64)))
	}
	for _, e := range r.Errors {
		rows.Add("error", e)
	}
	for _, w := range r.Warnings {
		rows.Add("warning", w)
	}
	if g.output == output.CSV {
		return output.WriteCSV(g.stdout, eventRows(events))
	}
	if err := output.WriteTable(g.stdout, rows); err != nil {
		return err
	}
	if len(events) == 0 {
		return nil
	}
	return output.WriteTable(g.stdout, eventRows(events))
}

// operatorTexts are a rejected run's stored reasons as an operator reads
// them, without package prefixes, as main prints a rejection on stderr.
func operatorTexts(errs []string) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = packagePrefix.ReplaceAllString(e, "$1")
	}
	return out
}

func eventRows(events []ledger.Event) output.Rows {
	rows := output.Rows{Header: []string{"verdict", "key", "file", "line", "collided with", "differs in", "attention"}}
	for _, e := range events {
		with := "-"
		if e.CollidedWith != nil {
			with = *e.CollidedWith
			if e.CollidedRunID != nil {
				with += " (run " + itoa(*e.CollidedRunID) + ")"
			}
		}
		attention := ""
		if e.NeedsAttention {
			attention = "yes"
		}
		rows.Add(e.Verdict, e.Key, e.File, itoa(e.Line), with, strings.Join(e.DifferingFields, ","), attention)
	}
	return rows
}
