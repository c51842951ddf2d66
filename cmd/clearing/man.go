package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
)

// manSection is the section of the manual the pages belong to: commands.
const manSection = "1"

// manDatePlaceholder stands in the pages' header for the date that cobra's
// generator always writes, and is then removed: a date would change every
// page each month (or each time SOURCE_DATE_EPOCH does) without a word of
// them changing, and CI compares the pages in man/ with the tree.
var manDatePlaceholder = time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)

// newManCommand writes the manual pages. It is hidden: it is how 'make man'
// writes man/, not something an operator runs.
func newManCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:    "man DIR",
		Short:  "Write a manual page for every command into DIR",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: g.run(func(_ context.Context, args []string) error {
			return writeManPages(newRootCommand(&globalOptions{}), args[0])
		}),
	}
}

// manPages renders the page of every available command of root's tree, by
// file name: clearing.1, clearing-ingest.1, clearing-corrections-approve.1.
func manPages(root *cobra.Command) (map[string][]byte, error) {
	root.DisableAutoGenTag = true // no "Auto generated" history with a date
	asMarkdown(root)
	header := &doc.GenManHeader{Section: manSection, Date: &manDatePlaceholder, Source: "clearing", Manual: "clearing manual"}
	pages := map[string][]byte{}
	var walk func(c *cobra.Command) error
	walk = func(c *cobra.Command) error {
		var buf bytes.Buffer
		h := *header
		if err := doc.GenMan(c, &h, &buf); err != nil {
			return err
		}
		page, err := undated(buf.Bytes())
		if err != nil {
			return fmt.Errorf("man page of %s: %w", c.CommandPath(), err)
		}
		pages[strings.ReplaceAll(c.CommandPath(), " ", "-")+"."+manSection] = page
		for _, s := range c.Commands() {
			if s.IsAvailableCommand() && !s.IsAdditionalHelpTopicCommand() {
				if err := walk(s); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return pages, walk(root)
}

// asMarkdown rewrites the help of every command of the tree as the
// Markdown that cobra's generator expects: the help is plain text laid out
// for a terminal, in which Markdown would eat "<source>" as a tag, take
// "missing_in_ledger" and "*.ach" for emphasis, and run an indented list
// (the exit codes, the accounts) into one paragraph. Indented lines become
// a verbatim block; everything else has Markdown's characters escaped.
// Examples are verbatim already.
func asMarkdown(c *cobra.Command) {
	c.Short = escapeMarkdown(c.Short)
	c.Long = manText(c.Long)
	// A flag's usage is a line of its own, where only a tag would be lost.
	c.LocalFlags().VisitAll(func(f *pflag.Flag) { f.Usage = tagEscaper.Replace(f.Usage) })
	c.PersistentFlags().VisitAll(func(f *pflag.Flag) { f.Usage = tagEscaper.Replace(f.Usage) })
	for _, s := range c.Commands() {
		asMarkdown(s)
	}
}

var markdownEscaper = strings.NewReplacer(`\`, `\\`, "`", "\\`", `*`, `\*`, `_`, `\_`, `<`, `\<`, `>`, `\>`, `[`, `\[`, `]`, `\]`, `#`, `\#`)

var tagEscaper = strings.NewReplacer(`<`, `\<`, `>`, `\>`)

func escapeMarkdown(s string) string { return markdownEscaper.Replace(s) }

// manText turns a command's long help into Markdown.
func manText(long string) string {
	var out []string
	verbatim := false
	for _, line := range strings.Split(long, "\n") {
		indented := strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t")
		switch {
		case indented && !verbatim:
			out = append(out, "```")
			verbatim = true
		case !indented && verbatim:
			out = append(out, "```")
			verbatim = false
		}
		if !verbatim {
			line = escapeMarkdown(line)
		}
		out = append(out, line)
	}
	if verbatim {
		out = append(out, "```")
	}
	return strings.Join(out, "\n")
}

// undated empties the date field of a page's .TH line.
func undated(page []byte) ([]byte, error) {
	date := []byte(` "` + manDatePlaceholder.Format("Jan 2006") + `" `)
	start := bytes.Index(page, []byte("\n.TH "))
	if start < 0 {
		return nil, fmt.Errorf("no .TH header")
	}
	end := start + 1 + bytes.IndexByte(page[start+1:], '\n')
	i := bytes.Index(page[start:end], date)
	if i < 0 {
		return nil, fmt.Errorf("no date in its .TH header")
	}
	i += start
	return slices.Concat(page[:i], []byte(` "" `), page[i+len(date):]), nil
}

// writeManPages writes the pages into dir and removes any other page there,
// so that dir holds exactly the tree's pages.
func writeManPages(root *cobra.Command, dir string) error {
	pages, err := manPages(root)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, err := filepath.Glob(filepath.Join(dir, "*."+manSection))
	if err != nil {
		return err
	}
	for _, p := range old {
		if _, keep := pages[filepath.Base(p)]; !keep {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
	}
	for name, page := range pages {
		if err := os.WriteFile(filepath.Join(dir, name), page, 0o644); err != nil {
			return err
		}
	}
	return nil
}
