package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/clearing-dev/clearing/formats/camt"
	"github.com/clearing-dev/clearing/formats/ipm"
	"github.com/clearing-dev/clearing/formats/mt940"
)

// The camt versions 'generate camt' writes: every one the reader reads.
var camtVersions = func() []string {
	var vs []string
	for v := 2; v <= 13; v++ {
		vs = append(vs, fmt.Sprintf("001.%02d", v))
	}
	return vs
}()

func newGenerateCamtCommand(g *globalOptions) *cobra.Command {
	o := camt.RandomOptions{Seed: 1, Statements: 1, Entries: 10, Currency: "EUR", BatchPercent: 10, ChargesPercent: 10,
		Start: defaultGenerateDate}
	gen := camt.GenerateOptions{Message: "053", Version: "001.08"}
	var out string
	cmd := &cobra.Command{
		Use:   "camt",
		Short: "Write an ISO 20022 camt.053, camt.052 or camt.054 bank statement",
		Long: `Write a camt document of one account (a made-up IBAN): one statement per day,
booked credits and debits, some entries batches of two to four transaction
details, some debits with charges, and opening and closing balances that add
up. Import it with 'clearing statement import --source SOURCE FILE'.`,
		Example: `  clearing generate camt --message 053 --version 001.02 --statements 2 --entries 500 --out statement.xml
  clearing statement import --source bank statement.xml`,
		Args: cobra.NoArgs,
		RunE: g.run(func(_ context.Context, _ []string) error {
			return writeTo(g, out, func(w io.Writer) error {
				// Created at 18:00 on the last statement's day, so that the
				// options alone decide the bytes.
				last := o.Start.AddDate(0, 0, max(o.Statements, 1)-1)
				gen.MsgID = fmt.Sprintf("CLEARING-GEN-%s-%d", last.Format("20060102"), o.Seed)
				gen.Created = last.Add(18 * time.Hour)
				return camt.Generate(w, camt.RandomStatements(o), gen)
			})
		}),
	}
	f := cmd.Flags()
	f.StringVar(&gen.Message, "message", gen.Message, "message: 053 (statement), 052 (intraday report) or 054 (notification)")
	restrictFlag(f, "message", []string{"052", "053", "054"})
	f.StringVar(&gen.Version, "version", gen.Version, fmt.Sprintf("message version: %s to %s", camtVersions[0], camtVersions[len(camtVersions)-1]))
	restrictFlag(f, "version", camtVersions)
	f.Var(dateValue{&o.Start}, "date", "booking day of the first statement, YYYY-MM-DD")
	f.IntVar(&o.Statements, "statements", o.Statements, "statements, one per day")
	f.IntVar(&o.Entries, "entries", o.Entries, "entries per statement")
	f.StringVar(&o.Currency, "currency", o.Currency, "ISO 4217 currency code")
	f.IntVar(&o.BatchPercent, "batch-percent", o.BatchPercent, "share of entries written as batches of transaction details")
	f.IntVar(&o.ChargesPercent, "charges-percent", o.ChargesPercent, "share of debit entries with charges")
	f.Uint64Var(&o.Seed, "seed", o.Seed, "seed: the same seed gives the same file")
	f.StringVar(&out, "out", "-", "file to write; - for stdout")
	return cmd
}

func newGenerateMT940Command(g *globalOptions) *cobra.Command {
	o := mt940.RandomOptions{Seed: 1, Statements: 1, Lines: 10, Currency: "EUR", Start: defaultGenerateDate}
	var gen mt940.GenerateOptions
	var out string
	cmd := &cobra.Command{
		Use:   "mt940",
		Short: "Write a SWIFT MT940 bank statement",
		Long: `Write MT940 messages of one account (a made-up IBAN): one statement per day,
:61: lines with :86: details, and opening and closing balances that add up;
with --envelope each message is wrapped in the {1:}{2:}{4: ... -} blocks a
SWIFT network delivers, with --crlf lines end in CR LF. Import it with
'clearing statement import --source SOURCE FILE'.`,
		Example: `  clearing generate mt940 --statements 5 --lines 200 --envelope --crlf --out statement.sta
  clearing statement import --source bank statement.sta`,
		Args: cobra.NoArgs,
		RunE: g.run(func(_ context.Context, _ []string) error {
			return writeTo(g, out, func(w io.Writer) error {
				return mt940.Generate(w, mt940.RandomStatements(o), gen)
			})
		}),
	}
	f := cmd.Flags()
	f.Var(dateValue{&o.Start}, "date", "date of the first statement, YYYY-MM-DD")
	f.IntVar(&o.Statements, "statements", o.Statements, "statements, one per day")
	f.IntVar(&o.Lines, "lines", o.Lines, "statement lines (:61:) per statement")
	f.StringVar(&o.Currency, "currency", o.Currency, "ISO 4217 currency code")
	f.IntVar(&o.BlankReferencePercent, "blank-reference-percent", 0, "share of lines without a bank reference (keyed by their position)")
	f.BoolVar(&gen.Envelope, "envelope", false, "wrap each message in SWIFT blocks {1:}{2:}{4: ... -}")
	f.BoolVar(&gen.CRLF, "crlf", false, "end lines with CRLF")
	f.Uint64Var(&o.Seed, "seed", o.Seed, "seed: the same seed gives the same file")
	f.StringVar(&out, "out", "-", "file to write; - for stdout")
	return cmd
}

func newGenerateIPMCommand(g *globalOptions) *cobra.Command {
	o := ipm.GenerateOptions{Seed: 1, Presentments: 1000, Encoding: ipm.EncodingCP500, Day: defaultGenerateDate}
	var out string
	cmd := &cobra.Command{
		Use:   "ipm",
		Short: "Write a Mastercard IPM clearing file",
		Long: `Write an IPM clearing file: a file header, first presentments (purchases and
refunds) under valid acquirer reference numbers, and a trailer whose counts
and amount check total agree, as variable blocked records (VBS), optionally in
1014-byte blocks, in EBCDIC (cp500, cp037) or Latin-1. With --lifecycle, some
presentments are followed by their reversal, some by a chargeback and a
second presentment, and the file gets a fee collection.

The ARNs and file ids carry --date: a file of another day shares no key with
this one. The next file of the same day starts its ARNs after this one's
(--arn-start) and takes the next --file-number.`,
		Example: `  clearing generate ipm --presentments 10000 --blocked --lifecycle --out clearing.ipm
  clearing ingest clearing.ipm
  clearing generate ipm --presentments 10000 --lifecycle --arn-start 10001 --file-number 2 --out second.ipm`,
		Args: cobra.NoArgs,
		RunE: g.run(func(_ context.Context, _ []string) error {
			return writeTo(g, out, func(w io.Writer) error {
				sum, err := ipm.Generate(w, o)
				if err == nil {
					g.log.Info("generated", "messages", sum.Messages, "presentments", sum.Presentments, "refunds", sum.Refunds,
						"chargebacks", sum.Chargebacks, "second_presentments", sum.Second, "reversals", sum.Reversals, "fees", sum.Fees)
				}
				return err
			})
		}),
	}
	f := cmd.Flags()
	f.IntVar(&o.Presentments, "presentments", o.Presentments, "first presentments per logical file")
	f.IntVar(&o.LogicalFiles, "logical-files", 1, "header and trailer pairs in the file")
	f.BoolVar(&o.Blocked, "blocked", false, "write 1014-byte blocks (otherwise plain VBS)")
	f.StringVar(&o.Encoding, "encoding", o.Encoding, fmt.Sprintf("code page: %v", ipm.Encodings()))
	restrictFlag(f, "encoding", ipm.Encodings())
	f.BoolVar(&o.Lifecycle, "lifecycle", false, "add reversals, chargebacks, second presentments and a fee collection")
	f.Var(dateValue{&o.Day}, "date", "business day of the file, which its ARNs and file ids carry, YYYY-MM-DD")
	f.Int64Var(&o.ARNStart, "arn-start", 1, "sequence of the first ARN (its 11 digits before the check digit)")
	f.IntVar(&o.FirstFile, "file-number", 1, "number of the first logical file, which its file id and fee collection carry")
	f.Uint64Var(&o.Seed, "seed", o.Seed, "seed: the same seed gives the same file")
	f.StringVar(&out, "out", "-", "file to write; - for stdout")
	return cmd
}
