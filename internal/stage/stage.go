// Package stage loads one file's records with COPY into a table private to
// one connection (record_stage), numbered 1..n in file order, so that
// packages ledger and statement can apply them with set-based SQL; they
// take the *Stage they read as a parameter. It knows records, not files:
// package ingest opens, reads and validates the whole file before anything
// is staged.
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

// createStage leaves a quarter of each page free (fillfactor 75): applying
// a chunk marks its staged records (originals found, holds, settlements),
// and a record updated in its own page stays where the seq BRIN says it is.
// Moved to a new page at the end of the table, it would be outside every
// summarised range, and each later chunk's scan would read it again.
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
    settle_amount  bigint,
    settle_currency text,
    settle_group   text    COLLATE "C",
    link_fallback  text    COLLATE "C",
    link_fallback_prefix text COLLATE "C",
    -- Filled while applying a chunk: the original a return or reversal
    -- undoes, the correction that settled a record, and why a record could
    -- not be posted.
    base_direction text,
    parent_id      bigint,
    -- settles_id is the correction posting that already settled a
    -- clearing record (a late arrival), or that it conflicts with.
    settles_id     bigint,
    outcome        text
) WITH (fillfactor = 75)`

// grantOwner grants the owner of the ledger's tables SELECT on the stage,
// unless that owner is the session's own role.
const grantOwner = `
DO $$
DECLARE
    owner text := (SELECT pg_get_userbyid(c.relowner) FROM pg_class c WHERE c.oid = 'postings'::regclass);
BEGIN
    IF owner <> current_user THEN
        EXECUTE format('GRANT SELECT ON pg_temp.record_stage TO %I', owner);
    END IF;
END
$$`

// stageColumns are the columns Load fills, in CopyFrom order.
var stageColumns = []string{
	"seq", "kind", "own_key", "posting_key", "detail", "reference", "alt_reference",
	"amount_minor", "currency", "direction", "account", "account_last4", "value_date",
	"digest", "link_reference", "link_by_alt", "link_prefix", "link_suffix", "link_depth", "link_parent_suffix", "is_repeat", "line_type", "line",
	"settle_amount", "settle_currency", "settle_group", "link_fallback", "link_fallback_prefix",
}

// Stage holds one file's records on one connection while they are applied.
type Stage struct {
	conn *pgx.Conn
	n    int64
}

// New prepares an empty staging table on conn. The connection must stay
// the same for the life of the Stage, and must be a fresh session: it has
// used no temporary table yet.
func New(ctx context.Context, conn *pgx.Conn) (*Stage, error) {
	// Temporary tables live in the session's own buffers, 8 MB by default;
	// a large file's stage would spill to disk. PostgreSQL refuses to change
	// the setting once the session has used a temporary table, hence a
	// fresh session; memory is only used as the stage grows.
	if _, err := conn.Exec(ctx, `SET temp_buffers = '256MB'`); err != nil {
		return nil, fmt.Errorf("stage: %w", err)
	}
	if _, err := conn.Exec(ctx, createStage); err != nil {
		return nil, fmt.Errorf("stage: create stage: %w", err)
	}
	if _, err := conn.Exec(ctx, `TRUNCATE record_stage`); err != nil {
		return nil, fmt.Errorf("stage: clear stage: %w", err)
	}
	// The ledger's routines read the stage as the schema's owner, who may
	// not be a superuser: the session's role, which owns the stage, lets it.
	if _, err := conn.Exec(ctx, grantOwner); err != nil {
		return nil, fmt.Errorf("stage: let the ledger read the stage: %w", err)
	}
	return &Stage{conn: conn}, nil
}

// Len is the number of staged records; they are numbered 1..Len.
func (s *Stage) Len() int64 { return s.n }

// Load streams records into the stage with COPY, numbering them from 1 in
// the order next yields them. next returns (nil, nil) after the last record;
// an error from next aborts the COPY and leaves the stage empty. next runs on
// a goroutine of its own, a few batches ahead of the COPY, so that parsing
// a file and sending it overlap; it is never called concurrently, and not
// at all once Load has returned.
func (s *Stage) Load(ctx context.Context, next func() (*formats.Record, error)) (int64, error) {
	src := newRecordSource(next)
	n, err := s.conn.CopyFrom(ctx, pgx.Identifier{Table}, stageColumns, src)
	src.stop()
	if src.err != nil {
		return 0, src.err
	}
	if err != nil {
		return 0, fmt.Errorf("stage: stage records: %w", err)
	}
	// The stage is written in record order, so a BRIN index on the record
	// number finds a chunk's rows for a fraction of a B-tree's build. Only
	// the columns that statements select or join the stage by are
	// analysed: statistics on all of them cost a third of the COPY.
	if _, err := s.conn.Exec(ctx, `CREATE INDEX ON record_stage USING brin (seq);
ANALYZE record_stage (seq, kind, link_depth, own_key)`); err != nil {
		return 0, fmt.Errorf("stage: index stage: %w", err)
	}
	s.n = n
	return n, nil
}

// rowBatch is how many records the reader hands over at a time: enough to
// make the hand-over cheap, few enough that memory stays small.
const rowBatch = 512

// batch is a run of records read, or the error that ended reading.
type batch struct {
	recs []*formats.Record
	err  error
}

// recordSource adapts a pull function to pgx.CopyFromSource. The file is
// read on a goroutine of its own, a few batches ahead; each record's row
// (its digest, its columns) is built on the COPY's side, so that reading
// and building share the two halves of the work.
type recordSource struct {
	batches chan batch
	done    chan struct{}
	exited  chan struct{}
	cur     []*formats.Record
	i       int
	seq     int64
	row     []any
	err     error
}

func newRecordSource(next func() (*formats.Record, error)) *recordSource {
	r := &recordSource{batches: make(chan batch, 4), done: make(chan struct{}), exited: make(chan struct{})}
	go r.produce(next)
	return r
}

func (r *recordSource) produce(next func() (*formats.Record, error)) {
	defer close(r.exited)
	defer close(r.batches)
	recs := make([]*formats.Record, 0, rowBatch)
	send := func(b batch) bool {
		select {
		case r.batches <- b:
			return true
		case <-r.done:
			return false
		}
	}
	for {
		rec, err := next()
		if err != nil {
			send(batch{recs: recs, err: err})
			return
		}
		if rec == nil {
			if len(recs) > 0 {
				send(batch{recs: recs})
			}
			return
		}
		recs = append(recs, rec)
		if len(recs) == rowBatch {
			if !send(batch{recs: recs}) {
				return
			}
			recs = make([]*formats.Record, 0, rowBatch)
		}
	}
}

// stop ends the producer, whether or not it has finished, and waits for it.
func (r *recordSource) stop() {
	select {
	case <-r.done:
	default:
		close(r.done)
	}
	<-r.exited
}

func (r *recordSource) Next() bool {
	for r.i == len(r.cur) {
		if r.err != nil {
			return false
		}
		b, ok := <-r.batches
		if !ok {
			return false
		}
		r.cur, r.i, r.err = b.recs, 0, b.err
	}
	r.seq++
	r.row = stageRow(r.seq, r.cur[r.i])
	r.cur[r.i] = nil
	r.i++
	return true
}

func (r *recordSource) Values() ([]any, error) { return r.row, nil }

func (r *recordSource) Err() error { return r.err }

func stageRow(seq int64, rec *formats.Record) []any {
	digest := formats.Digest(rec)
	var postingKey, linkRef, linkPrefix, linkSuffix, parentSuffix, settleAmount, settleCurrency, fallback, fallbackPrefix any
	linkByAlt, depth := false, 0
	if rec.Link != nil {
		linkRef, linkPrefix, linkSuffix = rec.Link.Reference, rec.Link.KeyPrefix, rec.Link.Suffix
		linkByAlt = rec.Link.ByAlt
		depth = segments(rec.Link.Suffix)
		parentSuffix = rec.Link.Suffix[:max(0, strings.LastIndexByte(rec.Link.Suffix, ':'))]
		if rec.Link.Fallback != "" {
			fallback, fallbackPrefix = rec.Link.Fallback, rec.Link.FallbackPrefix
		}
	}
	if rec.Kind == formats.Clearing || rec.Kind == formats.Notice {
		postingKey = rec.Key
	}
	if rec.SettleCurrency != "" {
		settleAmount, settleCurrency = rec.SettleAmount, rec.SettleCurrency
	}
	return []any{
		seq, string(rec.Kind), rec.Key, postingKey, rec.Detail, nullable(rec.Reference), nullable(rec.AltReference),
		rec.Amount, rec.Currency, string(rec.Direction), rec.Account.ID, rec.Account.Last4, rec.ValueDate,
		digest[:], linkRef, linkByAlt, linkPrefix, linkSuffix, depth, parentSuffix, rec.Repeat, lineType(rec), rec.Line,
		settleAmount, settleCurrency, nullable(rec.SettleGroup), fallback, fallbackPrefix,
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
