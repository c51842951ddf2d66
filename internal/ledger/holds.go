package ledger

import (
	"context"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"
)

// Holds are the checks that keep a whole file from posting when its
// records, each new by its key, are most likely money the ledger already
// holds. They run inside a chunk's transaction, under the source's lock, so
// that the check and the posting are one decision: two ingests racing each
// other are ordered by the lock, and the second sees what the first
// committed.
type Holds struct {
	// Positional: the records are keyed by file and line (a CSV mapping
	// without key columns), so a file whose lines shifted is held.
	Positional bool
	// Resends: an ACH file whose entries match posted ones on everything
	// but the effective date is held as a possible re-send.
	Resends bool
}

// holdIfShifted protects a file whose keys are positions (file and line)
// from a corrected version that shifted its lines: a record that lands on
// an earlier line's key is a conflict, and every line after it would post
// under a key that is new only because it moved. So when any staged
// clearing record of from..to already has its key posted with other
// content, no record from lo on posts: the colliding ones are audited as
// conflicts (or duplicates), every other one as held_by_conflict.
//
// The first chunk an ingest applies checks the rest of the file; later
// chunks check their own records, which is enough: a concurrent ingest of
// the same file id covers the same lines, chunk for chunk, and whichever
// applies a chunk second (the source lock orders them) meets the other's
// content there.
func holdIfShifted(ctx context.Context, tx pgx.Tx, b *Batch, lo, from, to int64) (bool, error) {
	var held bool
	if err := tx.QueryRow(ctx, holdShifted.Call(), b.Tenant, b.RunID, lo, from, to).Scan(&held); err != nil {
		return false, fmt.Errorf("ledger: check for shifted lines: %w", holdShifted.Err(err))
	}
	return held, nil
}

// holdShiftedStatement is holdIfShifted's: $3 is lo, $4..$5 the records
// checked. The stage is a session's own table: the postings it is compared
// with are read in a CTE of their own, which a distributed planner runs on
// the tenant's shard, and the stage is updated from what it returns.
const holdShiftedStatement = `
WITH k AS (
    SELECT s.seq, p.digest IS NOT NULL AS posted, p.digest <> s.digest AS differs
      FROM record_stage s
      LEFT JOIN LATERAL (SELECT p.digest FROM postings p WHERE p.tenant_id = $1 AND p.posting_key = s.own_key LIMIT 1) p ON true
     WHERE s.seq >= least($3::bigint, $4::bigint) AND s.kind = 'clearing'
)
UPDATE record_stage s SET outcome = 'held_by_conflict'
  FROM k
 WHERE k.seq = s.seq AND s.seq >= $3 AND s.outcome IS NULL AND NOT k.posted
   AND EXISTS (SELECT 1 FROM k c WHERE c.seq BETWEEN $4 AND $5 AND c.differs);
RETURN FOUND`

// resendDays is how far, in days, a re-sent file's effective date may have
// moved from the original's. A bank that asks for another business day
// moves it by a few; a recurring payment (weekly payroll, say) recurs a
// week or more later, and is a payment of its own.
const resendDays = "6"

// resendSample is how many new entries are looked at first: a re-sent file
// matches from its first entry on, and an ordinary file is then spared a
// probe per entry. They are looked for in consecutive windows of the stage
// that grow from resendWindow records by a factor of eight: in a new file
// the first window holds them, and no record past it is probed or sorted.
const (
	resendSample = 200
	resendWindow = 4 * resendSample
)

// holdIfResent holds a file whose new entries are, for the most part, the
// entries of a posted file with only the effective entry date changed:
// the same company, trace number, amount, direction and account, and a
// date at most resendDays away. The date is part of an ACH key (trace
// numbers repeat across days), so each such entry has a new key and would
// post its money a second time. At least two entries, and at least half of
// the file's new ones, must match: one recurring payment that happens to
// match holds nothing. Every new clearing record from lo to end is then
// possible_resend, for a person. When no clearing record from lo to end is
// new, b.AllPosted says so.
func holdIfResent(ctx context.Context, tx pgx.Tx, b *Batch, lo, end int64) (bool, error) {
	count := func(from, to int64, limit *int64) (n, matched int64, err error) {
		if err := tx.QueryRow(ctx, resendMatches.Call(), b.Tenant, b.RunID, b.Source, from, to, limit).Scan(&n, &matched); err != nil {
			return 0, 0, fmt.Errorf("ledger: check for a re-sent file: %w", resendMatches.Err(err))
		}
		return n, matched, nil
	}
	held := func(n, matched int64) bool { return matched >= 2 && 2*matched >= n }
	// The windows follow each other: the first resendSample new entries of
	// the file are those of the windows in turn.
	var n, matched int64
	for from, w := lo, int64(resendWindow); ; from, w = from+w, w*8 {
		to := min(from+w-1, end)
		left := resendSample - n
		wn, wm, err := count(from, to, &left)
		if err != nil {
			return false, err
		}
		n, matched = n+wn, matched+wm
		if n >= resendSample || to == end {
			b.AllPosted = n == 0 && to == end
			break
		}
	}
	if !held(n, matched) {
		return false, nil
	}
	n, matched, err := count(lo, end, nil)
	if err != nil || !held(n, matched) {
		return false, err
	}
	if _, err := tx.Exec(ctx, holdResent.Call(), b.Tenant, b.RunID, lo); err != nil {
		return false, fmt.Errorf("ledger: hold a re-sent file: %w", holdResent.Err(err))
	}
	return true, nil
}

// resendMatchesStatement counts the new clearing records of $4..$5 (the
// first $6 of them, or all when $6 is null) and how many of them match a
// posted entry of source $3 on everything but the date. A record without a
// reference is counted, and matches none.
const resendMatchesStatement = `
SELECT count(*) AS n, count(m.found) AS matched
  FROM (SELECT s.* FROM record_stage s
          LEFT JOIN LATERAL (SELECT 1 AS found FROM postings p WHERE p.tenant_id = $1 AND p.posting_key = s.own_key LIMIT 1) k ON true
         WHERE s.seq BETWEEN $4 AND $5 AND s.kind = 'clearing' AND s.outcome IS NULL AND k.found IS NULL
         ORDER BY s.seq LIMIT $6) s
  LEFT JOIN LATERAL (
       SELECT 1 AS found FROM postings p
        WHERE p.reference = s.reference AND p.tenant_id = $1 AND p.source = $3 AND p.kind = 'clearing'
          AND p.amount_minor = s.amount_minor AND p.currency = s.currency AND p.direction = s.direction
          AND p.account = coalesce(nullif(s.account, ''), 'counterparty:' || $3)
          AND p.value_date <> s.value_date AND abs(p.value_date - s.value_date) <= ` + resendDays + `
          AND left(p.posting_key, length(s.own_key) - length(s.reference) - 11)
              = left(s.own_key, length(s.own_key) - length(s.reference) - 11)
        LIMIT 1) m ON true`

// holdResentStatement holds every new clearing record from $3 on as
// possible_resend.
const holdResentStatement = `
WITH k AS (
    SELECT s.seq FROM record_stage s
      LEFT JOIN LATERAL (SELECT 1 AS found FROM postings p WHERE p.tenant_id = $1 AND p.posting_key = s.own_key LIMIT 1) k ON true
     WHERE s.seq >= $3 AND s.kind = 'clearing' AND s.outcome IS NULL AND k.found IS NULL
)
UPDATE record_stage s SET outcome = 'possible_resend' FROM k WHERE k.seq = s.seq`

// applyHolds runs b's checks for the chunk lo..hi and names in b.Held the
// verdict of a check that held the file. Records an earlier chunk held keep
// their outcome; the checks only add to them.
func applyHolds(ctx context.Context, tx pgx.Tx, b *Batch, lo, hi, end int64, first bool) error {
	if b.Holds.Resends && first {
		held, err := holdIfResent(ctx, tx, b, lo, end)
		if err != nil {
			return err
		}
		if held {
			b.Held = "possible_resend"
			return nil
		}
	}
	if b.Holds.Positional {
		to := hi
		if first {
			to = math.MaxInt64
		}
		held, err := holdIfShifted(ctx, tx, b, lo, lo, to)
		if err != nil {
			return err
		}
		if held {
			b.Held = "held_by_conflict"
		}
	}
	return nil
}
