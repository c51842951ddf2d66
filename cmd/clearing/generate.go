package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/clearing-dev/clearing/formats/ach"
	"github.com/clearing-dev/clearing/formats/bai2"
	"github.com/clearing-dev/clearing/formats/csv"
	"github.com/clearing-dev/clearing/formats/iso8583"
	"github.com/clearing-dev/clearing/internal/demo"
	"github.com/clearing-dev/clearing/internal/output"
)

func newGenerateCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "generate",
		Short: "Write sample clearing files and statements, for trying clearing and for load tests",
		Long: `Write deterministic sample files: the same options always give the same bytes.
The files hold made-up accounts and names only. 'clearing generate demo DIR'
writes a small coherent set (a day's ACH file, its re-upload, a return file,
statements) for a first look; the other subcommands write one file each.`,
	}
	cmd.AddCommand(newGenerateDemoCommand(g), newGenerateACHCommand(g), newGenerateISOCommand(g),
		newGenerateCSVCommand(g), newGenerateBAI2Command(g), newGenerateCamtCommand(g), newGenerateMT940Command(g),
		newGenerateIPMCommand(g))
	return cmd
}

func newGenerateDemoCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "demo DIR",
		Short: "Write a small coherent set of files to try every command on",
		Long: `Write into DIR: day1.ach (a day's entries), day1-corrected.ach (the same
entries and six new ones under a new file header), day1-restated.ach (the day's
file with one amount changed), returns.ach (two returns), statement.bai2 (the
bank's statement with planted differences), cards.ipm (a day of Mastercard IPM
card clearing with chargebacks and reversals, 1014-blocked EBCDIC),
cards-resent.ipm (the same messages unblocked and in ASCII), and keys.env
(shell variables naming a returned key, the changed key and the statement's
period).`,
		Example: `  clearing generate demo /tmp/demo && . /tmp/demo/keys.env && clearing ingest /tmp/demo/day1.ach`,
		Args:    cobra.ExactArgs(1),
		RunE: g.run(func(_ context.Context, args []string) error {
			s, err := demo.Write(args[0])
			if err != nil {
				return err
			}
			env := fmt.Sprintf("RETURNED_KEY=%s\nCHANGED_KEY=%s\nFROM=%s\nTO=%s\n", s.ReturnedKey, s.ChangedKey, s.From, s.To)
			if err := os.WriteFile(filepath.Join(args[0], "keys.env"), []byte(env), 0o644); err != nil {
				return err
			}
			rows := output.Rows{Header: []string{"file", "what it is"}}
			rows.Add(s.Day1, "a day's ACH entries")
			rows.Add(s.Reupload, "corrected re-upload: the same entries and six new ones, new file header")
			rows.Add(s.Restated, "the day's file with the amount of "+s.ChangedKey+" changed")
			rows.Add(s.Returns, "returns of two entries, one of them "+s.ReturnedKey)
			rows.Add(s.Statement, "the bank's BAI2 statement for "+s.From+": one entry missing, one short, one extra, a fee")
			return output.Write(g.stdout, g.output, s, rows)
		}),
	}
}

func newGenerateACHCommand(g *globalOptions) *cobra.Command {
	var entries, batchSize int
	var seed uint64
	var out string
	cmd := &cobra.Command{
		Use:   "ach",
		Short: "Write a NACHA ACH file of generated entries",
		Long: `Write an ACH file of generated forward entries: four originators (PPD, WEB,
CCD), credits and debits to checking and savings accounts, about 3% prenotes,
ascending trace numbers, no two entries sharing a key.`,
		Example: `  clearing generate ach --entries 1000000 --out big.ach`,
		Args:    cobra.NoArgs,
		RunE: g.run(func(_ context.Context, _ []string) error {
			return writeTo(g, out, func(w io.Writer) error {
				h := ach.DefaultHeader(time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC))
				h.BatchSize = batchSize
				return ach.WriteEntries(w, h, ach.GenerateEntries(seed, entries))
			})
		}),
	}
	f := cmd.Flags()
	f.IntVar(&entries, "entries", 1000, "number of entries")
	f.IntVar(&batchSize, "batch-size", ach.DefaultBatchSize, "most entries per batch")
	f.Uint64Var(&seed, "seed", 1, "seed: the same seed gives the same file")
	f.StringVar(&out, "out", "-", "file to write; - for stdout")
	return cmd
}

// writeTo opens path for writing ("-" or "" is stdout), runs write, and
// closes the file, keeping the first error.
func writeTo(g *globalOptions, path string, write func(io.Writer) error) (err error) {
	var w io.Writer = g.stdout
	var f *os.File
	if path != "" && path != "-" {
		if f, err = os.Create(path); err != nil {
			return err
		}
		w = f
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	err = write(bw)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

func newGenerateISOCommand(g *globalOptions) *cobra.Command {
	o := iso8583.GenerateOptions{Messages: 1000, Seed: 1, Framing: iso8583.FramingRDW}
	var out string
	cmd := &cobra.Command{
		Use:   "iso8583",
		Short: "Write an ISO 8583 message file",
		Long: `Write an ISO 8583 message file: financial requests and advices, repeats,
authorisations, full and partial reversals (with and without an RRN), a few
reversals without an original, responses and network management messages.`,
		Example: `  clearing generate iso8583 --messages 1000000 --framing rdw --out clearing.ipm`,
		Args:    cobra.NoArgs,
		RunE: g.run(func(_ context.Context, _ []string) error {
			return writeTo(g, out, func(w io.Writer) error {
				sum, err := iso8583.Generate(w, o)
				if err == nil {
					g.log.Info("generated", "messages", sum.Messages, "clearing", sum.Clearing, "reversals", sum.Reversals,
						"notices", sum.Notices, "skipped", sum.Skipped)
				}
				return err
			})
		}),
	}
	f := cmd.Flags()
	f.IntVar(&o.Messages, "messages", o.Messages, "number of messages")
	f.Uint64Var(&o.Seed, "seed", o.Seed, "seed: the same seed gives the same file")
	f.StringVar(&o.Framing, "framing", o.Framing, fmt.Sprintf("framing: %v", iso8583.Framings()))
	f.StringVar(&o.Spec, "spec", iso8583.DefaultSpec, "spec to pack with: spec87 or spec87ascii")
	restrictFlag(f, "framing", iso8583.Framings())
	restrictFlag(f, "spec", []string{iso8583.SpecName87, iso8583.SpecName87ASCII})
	f.StringVar(&out, "out", "-", "file to write; - for stdout")
	return cmd
}

func newGenerateCSVCommand(g *globalOptions) *cobra.Command {
	o := csv.GenerateOptions{Preset: "signed-amount", Rows: 1000, Seed: 1}
	var out string
	cmd := &cobra.Command{
		Use:   "csv",
		Short: "Write a CSV settlement export in the shape of a preset mapping",
		Example: `  clearing generate csv --preset debit-credit --rows 1000 --bom --crlf --out bank.csv
  clearing ingest --format csv --map preset:debit-credit bank.csv`,
		Args: cobra.NoArgs,
		RunE: g.run(func(_ context.Context, _ []string) error {
			return writeTo(g, out, func(w io.Writer) error {
				_, err := csv.Generate(w, o)
				return err
			})
		}),
	}
	f := cmd.Flags()
	f.StringVar(&o.Preset, "preset", o.Preset, fmt.Sprintf("shape: %v", csv.Presets()))
	restrictFlag(f, "preset", csv.Presets())
	f.IntVar(&o.Rows, "rows", o.Rows, "number of rows")
	f.Int64Var(&o.Seed, "seed", o.Seed, "seed: the same seed gives the same file")
	f.BoolVar(&o.BOM, "bom", false, "start with a UTF-8 byte order mark")
	f.BoolVar(&o.CRLF, "crlf", false, "end lines with CRLF")
	f.BoolVar(&o.QuoteAll, "quote-all", false, "quote every field")
	f.IntVar(&o.SubtotalEvery, "subtotal-every", 0, "write a subtotal row every N rows")
	f.IntVar(&o.NewRows, "new-rows", 0, "rows added after --rows, as in a corrected re-upload")
	f.BoolVar(&o.Shuffle, "shuffle", false, "write the rows in a seeded order")
	f.StringVar(&out, "out", "-", "file to write; - for stdout")
	return cmd
}

func newGenerateBAI2Command(g *globalOptions) *cobra.Command {
	o := bai2.RandomOptions{Lines: 1000, Seed: 1}
	var out string
	cmd := &cobra.Command{
		Use:     "bai2",
		Short:   "Write a BAI2 bank statement with random lines",
		Example: `  clearing generate bai2 --lines 500 --days 2 --out statement.bai2`,
		Args:    cobra.NoArgs,
		RunE: g.run(func(_ context.Context, _ []string) error {
			return writeTo(g, out, func(w io.Writer) error {
				return bai2.Generate(w, bai2.RandomLines(o), bai2.GenerateOptions{})
			})
		}),
	}
	f := cmd.Flags()
	f.IntVar(&o.Lines, "lines", o.Lines, "number of transaction lines")
	f.Uint64Var(&o.Seed, "seed", o.Seed, "seed: the same seed gives the same file")
	f.IntVar(&o.Days, "days", 1, "consecutive as-of dates")
	f.IntVar(&o.Accounts, "accounts", 3, "accounts reported each day")
	f.StringVar(&out, "out", "-", "file to write; - for stdout")
	return cmd
}
