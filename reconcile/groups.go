package reconcile

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// A bank statement rarely lists the entries of an ACH file: it shows one
// line per batch or file on the settlement account, one per card settlement
// day and currency. Such a line (line type settlement_total) settles a
// group of ledger items, and matches the group whose net equals it within
// the tolerance. The groups are what the sources settle by:
//
//	level 0  a payout or batch the records name (a CSV mapping's settlement_group)
//	level 1  an ACH batch: company and effective date, in the file that first posted it
//	level 2  an ACH file: the run that first posted its entries
//	level 3  a day: the source's items of one value date, in the currency they settle in
//
// A line that names its group (level 0) is compared with that group alone:
// it settles it, or differs from its net as a settlement_total_mismatch.
// Any other line matches a group of the lowest level at which any fits: of the
// source, in its currency, dated within the window, with the same net.
// Exactly one must fit there, and no other line may take the same group;
// otherwise the line is ambiguous_settlement and names what fits, a break
// for a person, never a guess. A matched group's items are settled, not
// missing; a line that fits no group is compared with its day's net
// (checkSettlements) and is a settlement_total_mismatch when it differs,
// whose group's items it holds (classifyMembers).

// groupMembers lists, once per group it belongs to, every ledger item that
// a settlement total of the run could settle: those of a group they name,
// and those dated within the window of the first and last such line. $1
// tenant, $2 source, $3 from, $4 to, $5 the window in days.
var groupMembers = `
CREATE TEMP TABLE recon_members ON COMMIT DROP AS
WITH span AS (
    SELECT min(s_date) - $5::int AS lo, max(s_date) + $5::int AS hi FROM recon_class WHERE class = 'settlement_to_check'
), period AS MATERIALIZED (` + ledgerItems(true) + `
), items AS (
    SELECT i.* FROM period i, span WHERE i.value_date BETWEEN span.lo AND span.hi
)
-- A group the records name is whole within the period, whatever its dates:
-- a payout settles a week of sales.
SELECT id, 0 AS level, format('group %s', s_group) AS gid, s_currency AS currency, s_amount AS amount, value_date
  FROM period WHERE s_group IS NOT NULL
UNION ALL
SELECT id, 1, format('ACH batch of company %s, effective %s, in run %s', split_part(key, ':', 2), value_date, run_id) AS gid,
       s_currency AS currency, s_amount AS amount, value_date
  FROM items WHERE key LIKE 'ach:%' AND kind = 'clearing'
UNION ALL
SELECT id, 2, format('ACH file of run %s', run_id), s_currency, s_amount, value_date
  FROM items WHERE key LIKE 'ach:%' AND kind = 'clearing'
UNION ALL
SELECT id, 3, format('items of %s in %s', value_date, s_currency), s_currency, s_amount, value_date
  FROM items`

// matchGroups decides every settlement total against the groups: $1 the
// window in days, $2 the tolerance, $3 the tenant. A line that names no
// group and fits none is left for checkSettlements.
const matchGroups = `
WITH lines AS (
    SELECT c.s_id, c.s_amount, c.s_currency, c.s_date, sl.settle_group AS grp
      FROM recon_class c
      LEFT JOIN LATERAL (SELECT settle_group FROM statement_lines WHERE tenant_id = $3 AND id = c.s_id LIMIT 1) sl ON true
     WHERE c.class = 'settlement_to_check'
), groups AS (
    SELECT level, gid, currency, max(value_date) AS d, sum(amount) AS net, count(*) AS n
      FROM recon_members GROUP BY level, gid, currency
), named AS (
    SELECT l.s_id, format('group %s', l.grp) AS gid, coalesce(g.net, 0) AS net,
           abs(coalesce(g.net, 0) - l.s_amount) <= $2 AS ok
      FROM lines l
      LEFT JOIN groups g ON g.level = 0 AND g.gid = format('group %s', l.grp) AND g.currency = l.s_currency
     WHERE l.grp IS NOT NULL
), cand AS (
    SELECT l.s_id, g.level, g.gid, g.net, g.n
      FROM lines l
      JOIN groups g ON g.level > 0 AND g.currency = l.s_currency AND abs(g.net - l.s_amount) <= $2 AND abs(g.d - l.s_date) <= $1
     WHERE l.grp IS NULL
), best AS (
    SELECT c.*, count(*) OVER (PARTITION BY c.s_id) AS fits
      FROM cand c
     WHERE c.level = (SELECT min(level) FROM cand b WHERE b.s_id = c.s_id)
), decided AS (
    SELECT s_id, CASE WHEN ok THEN 'matched' ELSE 'settlement_total_mismatch' END AS class,
           CASE WHEN ok THEN 'settles_group' ELSE 'group_total_differs' END AS reason, gid AS group_id, net AS ledger_net
      FROM named
    UNION ALL
    SELECT s_id, CASE WHEN ok THEN 'matched' ELSE 'ambiguous_settlement' END,
           CASE WHEN ok THEN 'settles_group' ELSE 'several_groups_fit' END,
           CASE WHEN ok THEN gid ELSE fitting END, CASE WHEN ok THEN net END
      FROM (SELECT s_id, min(gid) AS gid, min(net) AS net,
                   bool_and(fits = 1) AND max(takers) = 1 AS ok,
                   string_agg(format('%s (%s items)', gid, n), '; ' ORDER BY gid) AS fitting
              FROM (SELECT b.*, count(*) OVER (PARTITION BY b.level, b.gid) AS takers FROM best b) b
             GROUP BY s_id) d
)
UPDATE recon_class c
   SET class = d.class, reason = d.reason, group_id = d.group_id, ledger_net = d.ledger_net
  FROM decided d
 WHERE c.s_id = d.s_id AND c.class = 'settlement_to_check'`

// classifyMembers gives the items of every decided group their class, once
// every settlement total is decided: settled by the line that matched their
// group, or settlement_member of a group whose total differs from them (the
// group the line names, else its day: checkSettlements), whose one break
// holds them, so that a person looks at one break with one difference and
// not at every item of it. Only items otherwise missing from the statement
// or in transit change class.
const classifyMembers = `
UPDATE recon_class c
   SET class = m.class, reason = m.reason, group_id = m.gid, settled_by = m.s_id
  FROM (SELECT DISTINCT ON (r.id) r.id, r.gid, l.s_id,
               CASE WHEN l.reason = 'settles_group' THEN 'settled' ELSE 'settlement_member' END AS class,
               CASE WHEN l.reason = 'settles_group' THEN 'in_settlement_total' ELSE 'in_differing_total' END AS reason
          FROM recon_class l
          JOIN recon_members r ON r.gid = l.group_id AND r.currency = l.s_currency
         WHERE l.reason = 'settles_group' OR l.class = 'settlement_total_mismatch'
         ORDER BY r.id, r.level, l.s_id) m
 WHERE c.l_id = m.id AND c.s_id IS NULL AND c.class IN ('missing_in_statement', 'in_transit')`

// settledByOwnLines finds the settlement totals whose own lines the
// statement lists: a camt batch entry with its transactions (TxDtls), keyed
// <entry key>:<n> in the same import (docs/decisions/camt-batch-entries.md).
// Those lines pair with the ledger's items one by one, so the total is
// settled by them when they add up to it, and is not compared with a group
// of the ledger, whose items would otherwise count twice. $1 tenant, $2 the
// ids of the run's settlement totals. The totals are read by id, and the
// session's recon_class is updated from the result, so that no distributed
// table is joined to a temporary one.
const settledByOwnLines = `
SELECT t.id
  FROM statement_lines t
 CROSS JOIN LATERAL (SELECT count(*) AS n, sum(CASE d.direction WHEN 'C' THEN d.amount_minor ELSE -d.amount_minor END) AS net
                       FROM statement_lines d
                      WHERE d.tenant_id = $1 AND d.source = t.source AND d.run_id = t.run_id
                        AND d.line_key > t.line_key || ':' AND d.line_key < t.line_key || ';'
                        AND d.line_type <> 'settlement_total' AND d.currency = t.currency) d
 WHERE t.tenant_id = $1 AND t.id = ANY ($2) AND d.n > 0
   AND d.net = CASE t.direction WHEN 'C' THEN t.amount_minor ELSE -t.amount_minor END`

// settleByOwnLines marks the settlement totals that their own lines settle
// (settledByOwnLines) matched, and says whether any total is left to check
// against the ledger's groups.
func settleByOwnLines(ctx context.Context, tx pgx.Tx, tenant string) (left bool, err error) {
	rows, err := tx.Query(ctx, `SELECT s_id FROM recon_class WHERE class = 'settlement_to_check'`)
	if err != nil {
		return false, fmt.Errorf("reconcile: settlement totals: %w", err)
	}
	totals, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil || len(totals) == 0 {
		return false, err
	}
	rows, err = tx.Query(ctx, settledByOwnLines, tenant, totals)
	if err != nil {
		return false, fmt.Errorf("reconcile: settlement totals settled by their own lines: %w", err)
	}
	settled, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return false, fmt.Errorf("reconcile: settlement totals settled by their own lines: %w", err)
	}
	if len(settled) > 0 {
		if _, err := tx.Exec(ctx, `
UPDATE recon_class SET class = 'matched', reason = 'settled_by_its_lines'
 WHERE class = 'settlement_to_check' AND s_id = ANY ($1)`, settled); err != nil {
			return false, fmt.Errorf("reconcile: settlement totals settled by their own lines: %w", err)
		}
	}
	return len(settled) < len(totals), nil
}
