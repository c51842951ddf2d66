// Package stage loads one file's records with COPY into a table private to
// one connection, numbered 1..n in file order, so that the ledger and
// statement import can apply them with set-based SQL. The whole file is
// staged before anything is applied: a file that fails to parse leaves
// nothing behind.
package stage

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/clearing-dev/clearing/formats"
)

// Table is the staging table's name. It is session-local: it disappears with the connection, so a
// crashed process leaves nothing behind, and concurrent ingests never see
// each other's rows.
const Table = "record_stage"

const createStage = `
CREATE TEMP TABLE IF NOT EXISTS record_stage (
    seq            bigint  NOT NULL,
    kind           text    NOT NULL,
    own_key        text    COLLATE "C" NOT NULL,
    posting_key    text    COLLATE "C",
    detail         text    NOT NULL,
    reference      text    COLLATE "C",
    alt_reference  text    COLLATE "C",
    amount_minor   bigint  NOT NULL,
    currency       text    NOT NULL,
    direction      text    NOT NULL,
    account        text    COLLATE "C" NOT NULL,
    account_last4  text    NOT NULL,
    value_date     date    NOT NULL,
    digest         bytea   NOT NULL,
    link_reference text    COLLATE "C",
    link_by_alt    boolean NOT NULL,
    link_prefix    text    COLLATE "C",
    link_suffix    text,
    link_depth     integer NOT NULL,
    link_parent_suffix text,
    is_repeat      boolean NOT NULL,
    line_type      text    NOT NULL,
    line           bigint  NOT NULL,
    -- Filled while applying a chunk: the original a return or reversal
    -- undoes, the correction that settled a record, and why a record could
    -- not be posted.
    base_direction text,
    parent_id      bigint,
    -- settles_id is the correction posting that already settled a
    -- clearing record (a late arrival), or that it conflicts with.
    settles_id     bigint,
    outcome        text
)`

// stageColumns are the columns Load fills, in CopyFrom order.
var stageColumns = []string{
	"seq", "kind", "own_key", "posting_key", "detail", "reference", "alt_reference",
	"amount_minor", "currency", "direction", "account", "account_last4", "value_date",
	"digest", "link_reference", "link_by_alt", "link_prefix", "link_suffix", "link_depth", "link_parent_suffix", "is_repeat", "line_type", "line",
}

// Stage holds one file's records on one connection while they are applied.
type Stage struct {
	conn *pgx.Conn
	n    int64
}

// New prepares an empty staging table on conn. The connection must stay
// the same for the life of the Stage.
func New(ctx context.Context, conn *pgx.Conn) (*Stage, error) {
	if _, err := conn.Exec(ctx, createStage); err != nil {
		return nil, fmt.Errorf("stage: create stage: %w", err)
	}
	if _, err := conn.Exec(ctx, `TRUNCATE record_stage`); err != nil {
		return nil, fmt.Errorf("stage: clear stage: %w", err)
	}
	return &Stage{conn: conn}, nil
}

// Len is the number of staged records; they are numbered 1..Len.
func (s *Stage) Len() int64 { return s.n }

// Load streams records into the stage with COPY, numbering them from 1 in
// the order next yields them. next returns (nil, nil) after the last record;
// an error from next aborts the COPY and leaves the stage empty.
func (s *Stage) Load(ctx context.Context, next func() (*formats.Record, error)) (int64, error) {
	src := &recordSource{next: next}
	n, err := s.conn.CopyFrom(ctx, pgx.Identifier{Table}, stageColumns, src)
	if src.err != nil {
		return 0, src.err
	}
	if err != nil {
		return 0, fmt.Errorf("stage: stage records: %w", err)
	}
	if _, err := s.conn.Exec(ctx, `CREATE INDEX ON record_stage (seq); ANALYZE record_stage`); err != nil {
		return 0, fmt.Errorf("stage: index stage: %w", err)
	}
	s.n = n
	return n, nil
}

// recordSource adapts a pull function to pgx.CopyFromSource.
type recordSource struct {
	next func() (*formats.Record, error)
	seq  int64
	row  []any
	err  error
}

func (r *recordSource) Next() bool {
	rec, err := r.next()
	if err != nil {
		r.err = err
		return false
	}
	if rec == nil {
		return false
	}
	r.seq++
	r.row = stageRow(r.seq, rec)
	return true
}

func (r *recordSource) Values() ([]any, error) { return r.row, nil }

func (r *recordSource) Err() error { return r.err }

func stageRow(seq int64, rec *formats.Record) []any {
	digest := formats.Digest(rec)
	var postingKey, linkRef, linkPrefix, linkSuffix, parentSuffix any
	linkByAlt, depth := false, 0
	if rec.Link != nil {
		linkRef, linkPrefix, linkSuffix = rec.Link.Reference, rec.Link.KeyPrefix, rec.Link.Suffix
		linkByAlt = rec.Link.ByAlt
		depth = segments(rec.Link.Suffix)
		parentSuffix = rec.Link.Suffix[:max(0, strings.LastIndexByte(rec.Link.Suffix, ':'))]
	}
	if rec.Kind == formats.Clearing || rec.Kind == formats.Notice {
		postingKey = rec.Key
	}
	return []any{
		seq, string(rec.Kind), rec.Key, postingKey, rec.Detail, nullable(rec.Reference), nullable(rec.AltReference),
		rec.Amount, rec.Currency, string(rec.Direction), rec.Account.ID, rec.Account.Last4, rec.ValueDate,
		digest[:], linkRef, linkByAlt, linkPrefix, linkSuffix, depth, parentSuffix, rec.Repeat, lineType(rec), rec.Line,
	}
}

// lineType is the statement line type of a record: its own, or one that
// follows from its kind.
func lineType(rec *formats.Record) string {
	switch {
	case rec.LineType != "":
		return string(rec.LineType)
	case rec.Kind == formats.Return || rec.Kind == formats.Reversal:
		return string(formats.ReturnLine)
	}
	return string(formats.Payment)
}

// segments counts the ":segment" parts of a link suffix: ":return" is 1,
// ":return:dishonored" is 2. Links are applied in that order, so a
// dishonored return finds a return staged earlier in the same chunk.
func segments(suffix string) int {
	n := 0
	for i := 0; i < len(suffix); i++ {
		if suffix[i] == ':' {
			n++
		}
	}
	return n
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
