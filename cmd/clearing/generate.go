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

	"github.com/clearing-dev/clearing/formats"
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

// defaultGenerateDate is the business day that every generator writes
// unless --date names another: the day of the ACH entries that the demo,
// the scenarios and the tests use, so that files generated with the
// defaults describe one day and reconcile over it.
var defaultGenerateDate = formats.Date(2026, time.March, 2)

// dateValue is a --date flag: a calendar date, YYYY-MM-DD, refused while
// the flags are parsed (exit 2) when it is not one.
type dateValue struct{ t *time.Time }

func (d dateValue) String() string {
	if d.t == nil || d.t.IsZero() {
		return ""
	}
	return d.t.Format(time.DateOnly)
}

func (d dateValue) Set(s string) error {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return fmt.Errorf("%q is not a date YYYY-MM-DD", s)
	}
	*d.t = t
	return nil
}

func (d dateValue) Type() string { return "date" }

func newGenerateACHCommand(g *globalOptions) *cobra.Command {
	o := ach.GenerateOptions{Seed: 1, Entries: 1000, Date: defaultGenerateDate, TraceStart: 1}
	batchSize := ach.DefaultBatchSize
	var out string
	cmd := &cobra.Command{
		Use:   "ach",
		Short: "Write a NACHA ACH file of generated entries",
		Long: `Write an ACH file of generated forward entries: four originators (PPD, WEB,
CCD), credits and debits to checking and savings accounts, about 3% prenotes,
ascending trace numbers, no two entries sharing a key. The originators take
turns every 1,000 entries and the effective date moves on a day every 4,000
(five days, then from --date again); the file is created at 18:00 the day
before --date.

An entry's key is its company, effective date and trace number: files of
another --date, --company or --trace-start share no key, so a day's file and
the next day's post side by side instead of conflicting. With --company, every
entry is the PPD entry of that one originator.

A file holds at most 9,980,000 entries: its control counts blocks of ten
records in six digits. Amounts run up to 5,000.00, and up to 500.00 from the
4,000,000th entry on, so that the control totals keep to their twelve digits.`,
		Example: `  clearing generate ach --entries 1000000 --out big.ach
  clearing generate ach --date 2026-03-02 --company 1111111111 --entries 200 --out day1.ach
  clearing generate ach --date 2026-03-03 --company 1111111111 --trace-start 201 --seed 2 --entries 200 --out day2.ach`,
		Args: cobra.NoArgs,
		RunE: g.run(func(_ context.Context, _ []string) error {
			if err := o.Check(); err != nil {
				return usageError{err}
			}
			return writeTo(g, out, func(w io.Writer) error {
				h := ach.DefaultHeader(o.Date.Add(-6 * time.Hour))
				h.BatchSize = batchSize
				return ach.WriteEntries(w, h, o.Generate())
			})
		}),
	}
	f := cmd.Flags()
	f.IntVar(&o.Entries, "entries", o.Entries, "number of entries")
	f.IntVar(&batchSize, "batch-size", batchSize, "most entries per batch")
	f.Var(dateValue{&o.Date}, "date", "effective entry date of the first entries, YYYY-MM-DD")
	f.StringVar(&o.Company, "company", "", "company identification of every entry, 10 digits or capital letters (default: four generated originators)")
	f.IntVar(&o.TraceStart, "trace-start", o.TraceStart, "sequence number of the first trace number (its last 7 digits)")
	f.Uint64Var(&o.Seed, "seed", o.Seed, "seed: the same seed gives the same file")
	f.StringVar(&out, "out", "-", "file to write; - for stdout")
	return cmd
}

// writeTo opens path for writing ("-" or "" is stdout), runs write, and
// closes the file, keeping the first error. A file that write failed on is
// removed: half a generated file is no file to ingest.
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
		if err != nil {
			os.Remove(path)
		}
	}
	return err
}

func newGenerateISOCommand(g *globalOptions) *cobra.Command {
	o := iso8583.GenerateOptions{Messages: 1000, Seed: 1, Framing: iso8583.FramingRDW}
	date := defaultGenerateDate
	var out string
	cmd := &cobra.Command{
		Use:   "iso8583",
		Short: "Write an ISO 8583 message file",
		Long: `Write an ISO 8583 message file: financial requests and advices, repeats,
authorisations, full and partial reversals (with and without an RRN), a few
reversals without an original, responses and network management messages.
The messages are sent from 22:00 the evening before --date, and settle (DE15)
on --date until the clock passes midnight (about 72,000 messages). A
message's key is its acquirer, RRN and MTI (a reversal without an RRN: its
original's STAN, the RRN's last six digits, and transmission time). The seed,
not --date, decides the RRNs by default (seed 1: 100000001 on); the next file
of the same seed starts after the last one's with --rrn-start.`,
		Example: `  clearing generate iso8583 --messages 1000000 --framing rdw --out clearing.ipm
  clearing generate iso8583 --messages 1000 --rrn-start 100001001 --out next.rdw`,
		Args: cobra.NoArgs,
		RunE: g.run(func(_ context.Context, _ []string) error {
			o.Start = date.Add(-2 * time.Hour)
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
	f.Var(dateValue{&date}, "date", "settlement date of the messages, YYYY-MM-DD")
	f.Int64Var(&o.RRNStart, "rrn-start", 0, "RRN of the first message, each next message the next one (default: derived from the seed)")
	restrictFlag(f, "framing", iso8583.Framings())
	restrictFlag(f, "spec", []string{iso8583.SpecName87, iso8583.SpecName87ASCII})
	f.StringVar(&out, "out", "-", "file to write; - for stdout")
	return cmd
}

func newGenerateCSVCommand(g *globalOptions) *cobra.Command {
	o := csv.GenerateOptions{Preset: "signed-amount", Rows: 1000, Seed: 1, Start: defaultGenerateDate, Days: 1}
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
	f.Var(dateValue{&o.Start}, "date", "date of the rows, YYYY-MM-DD")
	f.IntVar(&o.Days, "days", o.Days, "spread the rows over this many days from --date")
	f.IntVar(&o.IDStart, "id-start", 0, "number of the first row's id, so that the next file of a seed shares no id with this one")
	f.StringVar(&out, "out", "-", "file to write; - for stdout")
	return cmd
}

func newGenerateBAI2Command(g *globalOptions) *cobra.Command {
	o := bai2.RandomOptions{Lines: 1000, Seed: 1, Start: defaultGenerateDate}
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
	f.Var(dateValue{&o.Start}, "date", "first as-of date, YYYY-MM-DD")
	f.IntVar(&o.Days, "days", 1, "consecutive as-of dates")
	f.IntVar(&o.Accounts, "accounts", 3, "accounts reported each day")
	f.StringVar(&out, "out", "-", "file to write; - for stdout")
	return cmd
}
