package reconcile

// One statement pairs ledger items and statement lines with a full outer
// join and classifies every row as it comes out of the join; matched pairs
// are only counted, and everything else lands in temporary tables that live
// for the run's transaction:
//
//	recon_matched  per currency: how many pairs matched, and their sums
//	recon_sides    per side and currency: items, totals, the statement's last date
//	recon_class    every item that did not simply match, in one class
//
// (When a reference repeats on a side where it has a partner, the pass runs
// again in its ranked form.) A few small steps then refine recon_class
// (cross-currency pairs, returns, settlement totals, which read the ledger's
// items of those days again) before the run's totals, classes and
// discrepancies are stored. Amounts are signed from the counterparty's side:
// a credit to the counterparty is positive, so a matched pair has equal
// amounts and a difference is ledger minus statement. One item's amount is a
// bigint (a record is capped at formats.MaxAmountMinor), but every sum of
// items (a side's total, a class's amount, a day's net) is numeric: sum() of
// a bigint already is, and it is never cast back, because ten thousand
// capped amounts pass the bigint range.

// ledgerItems is the ledger side: the source's postings of the period, each
// with its approved corrections folded in. A correction that adjusts a
// posting (amount mismatch) is folded into it; one that stands alone (money
// the ledger lacked, an unbooked fee) is an item of its own. Without any
// adjusting correction in the tenant, the fold is left out: it is a join
// over every posting of the period.
func ledgerItems(folds bool) string {
	adjustment, join, corrected := "0", "", "p.kind = 'correction'"
	if folds {
		adjustment = "coalesce(c.adjustment, 0)::bigint"
		corrected = "c.refers_to IS NOT NULL OR " + corrected
		join = `
  LEFT JOIN (SELECT refers_to, sum(CASE direction WHEN 'C' THEN amount_minor ELSE -amount_minor END) AS adjustment
               FROM postings
              WHERE tenant_id = $1 AND refers_to IS NOT NULL AND kind = 'correction'
              GROUP BY refers_to) c ON c.refers_to = p.id`
	}
	return `
SELECT p.id, coalesce(p.reference, '') AS reference, p.currency::text AS currency, p.value_date, p.kind,
       p.refers_to, p.posting_key AS key, p.run_id, p.line, p.settle_group AS s_group,
       (CASE p.direction WHEN 'C' THEN p.amount_minor ELSE -p.amount_minor END) + ` + adjustment + ` AS amount,
       (` + corrected + `) AS corrected,
       -- What the other side settles the item in: its own amount, or its
       -- settlement amount when it settles in another currency (IPM DE5).
       coalesce(p.settle_currency, p.currency::text) AS s_currency,
       CASE WHEN p.settle_currency IS NULL
            THEN (CASE p.direction WHEN 'C' THEN p.amount_minor ELSE -p.amount_minor END) + ` + adjustment + `
            ELSE CASE p.direction WHEN 'C' THEN p.settle_amount ELSE -p.settle_amount END END AS s_amount
  FROM postings p` + join + `
 WHERE p.tenant_id = $1 AND p.source = $2 AND p.value_date BETWEEN $3 AND $4
   AND p.kind IN ('clearing', 'return', 'reversal', 'correction')
   AND NOT (p.kind = 'correction' AND p.refers_to IS NOT NULL)`
}

// statementLines is the statement side. Lines that repeat a key, and
// settlement totals, never pair.
const statementLines = `
SELECT l.id, l.reference, l.currency::text AS currency, l.value_date, l.line_type, l.occurrence, l.line_key AS key,
       l.run_id, l.line,
       CASE l.direction WHEN 'C' THEN l.amount_minor ELSE -l.amount_minor END AS amount,
       (l.reference <> '' AND l.occurrence = 1 AND l.line_type <> 'settlement_total') AS pairs
  FROM statement_lines l
 WHERE l.tenant_id = $1 AND l.source = $2 AND l.value_date BETWEEN $3 AND $4`

const createClass = `
CREATE TEMP TABLE recon_class (
    l_id        bigint,
    s_id        bigint,
    class       text NOT NULL,
    reason      text NOT NULL,
    reference   text COLLATE "C" NOT NULL,
    l_amount    bigint,
    l_currency  text,
    l_date      date,
    l_kind      text,
    l_refers_to bigint,
    s_amount    bigint,
    s_currency  text,
    s_date      date,
    s_line_type text,
    s_occurrence integer,
    -- The pass writes the ids, reference, amounts, currencies and class;
    -- the other columns of each side are fetched by id after it
    -- (fillLedgerSide, fillStatementSide).
    l_key       text,
    l_run       bigint,
    l_line      bigint,
    s_key       text,
    s_run       bigint,
    s_line      bigint,
    ledger_net  numeric,
    -- A settlement total that settles a group of ledger items names the
    -- group; the group's items name the line that settles them.
    group_id    text,
    settled_by  bigint
) ON COMMIT DROP;
CREATE TEMP TABLE recon_matched (currency text, pairs bigint, ledger_amount numeric, statement_amount numeric) ON COMMIT DROP;
CREATE TEMP TABLE recon_sides (side text, currency text, items bigint, total numeric, last_date date) ON COMMIT DROP`

// pairAndClassify returns the one pass over both sides. Items pair one to
// one on reference and currency. In the fast form they join as they are,
// which is exact when no reference repeats on a side where it finds a
// partner; the run checks that every item and line came out of the join
// once (recon_sides, 'joined') and otherwise repeats the pass in the ranked
// form, where the k-th item of a reference by amount and date pairs with the
// k-th line, so repeated references pair like with like.
//
// A pair is matched, corrected, an amount mismatch or a date out of the
// window; an item alone is, for now, missing from the statement, in transit
// (dated after the statement's last date) or returned (a return or reversal
// of its full amount exists, whatever its date: returns arrive days later);
// a line alone is repeated, a fee, a settlement total to check, or missing
// from the ledger. Each side's count and total per currency are taken from
// a scan of its own, not from the join, so that the bridge checks the join
// and the classification. Nothing is held but the rows that did not match:
// holding both sides and the joined rows to count them cost more than
// pairing them (docs/BENCHMARKS.md).
//
// Counting the sides costs a scan of each (2.55 s of the 8.0 to 9.5 s at
// 1,000,000 a side). With counted false the statement leaves them out, and
// countSides counts them beside it, on another connection in the same
// snapshot (pair).
func pairAndClassify(ranked, folds, counted bool) string {
	l, s, on := "l0", "s0", "l.reference <> '' AND s.pairs AND l.reference = s.reference AND l.currency = s.currency"
	if ranked {
		l = `(SELECT l0.*, CASE WHEN l0.reference <> '' THEN row_number() OVER (
                PARTITION BY l0.reference, l0.currency ORDER BY l0.amount, l0.value_date, l0.key) END AS rn FROM l0)`
		s = `(SELECT s0.*, CASE WHEN s0.pairs THEN row_number() OVER (
                PARTITION BY s0.reference, s0.currency, s0.pairs ORDER BY s0.amount, s0.value_date, s0.key) END AS rn FROM s0)`
		on = "l.reference = s.reference AND l.currency = s.currency AND l.rn = s.rn"
	}
	sides := ""
	if counted {
		sides = sideCounts + `
    UNION ALL`
	}
	return `
WITH l0 AS NOT MATERIALIZED (` + ledgerItems(folds) + `
), s0 AS NOT MATERIALIZED (` + statementLines + `
), last AS (
    SELECT max(value_date) AS d FROM s0
), j AS (
    -- Only what classifies a row and what a matched pair adds up to comes
    -- out of the join; the rest of an unpaired item's evidence is fetched
    -- afterwards, for it alone (fillLedgerSide, fillStatementSide).
    SELECT l.id AS l_id, s.id AS s_id, coalesce(l.reference, s.reference) AS reference,
           l.amount AS l_amount, l.currency AS l_currency, s.amount AS s_amount, s.currency AS s_currency,
           CASE
             WHEN l.id IS NOT NULL AND s.id IS NOT NULL THEN CASE
                  WHEN abs(l.amount - s.amount) > $6 THEN 'amount_mismatch'
                  WHEN abs(l.value_date - s.value_date) > $5 THEN 'date_out_of_window'
                  WHEN l.corrected THEN 'corrected'
                  ELSE 'matched' END
             WHEN l.id IS NOT NULL THEN CASE
                  WHEN rt.returned THEN 'returned'
                  WHEN l.kind IN ('return', 'reversal') THEN 'return_to_check'
                  WHEN l.value_date > (SELECT d FROM last) THEN 'in_transit'
                  ELSE 'missing_in_statement' END
             ELSE CASE
                  WHEN s.occurrence > 1 THEN 'duplicate_in_statement'
                  WHEN s.line_type = 'settlement_total' THEN 'settlement_to_check'
                  WHEN s.line_type = 'fee' THEN 'unbooked_fee'
                  ELSE 'missing_in_ledger' END
           END AS class
      FROM ` + l + ` l FULL JOIN ` + s + ` s ON ` + on + `
      -- LIMIT keeps this an index probe per unpaired clearing item; as a
      -- plain join the planner may hash every posting. It is a lateral
      -- join, not a subquery in the CASE, which a distributed planner
      -- cannot run over the items it has already read.
      LEFT JOIN LATERAL (SELECT true AS returned FROM postings r
                          WHERE s.id IS NULL AND l.kind = 'clearing'
                            AND r.tenant_id = $1 AND r.refers_to = l.id AND r.kind IN ('return', 'reversal')
                            AND r.amount_minor = abs(l.amount) LIMIT 1) rt ON true
    -- OFFSET 0 keeps j a subquery of its own, so that each row's class is
    -- worked out once, not once for every place below that names it.
    OFFSET 0
), g AS MATERIALIZED (
    -- The joined rows are read once, as they stream out of the join:
    -- matched pairs fold into one row per currency, and every other row
    -- stays a group of its own, named by its ids and reference.
    SELECT class, l_currency, s_currency, count(*) AS rows, count(l_id) AS l_rows, count(s_id) AS s_rows,
           sum(l_amount) AS l_sum, sum(s_amount) AS s_sum,
           CASE WHEN class <> 'matched' THEN l_id END AS l_id, CASE WHEN class <> 'matched' THEN s_id END AS s_id,
           CASE WHEN class <> 'matched' THEN reference END AS reference
      FROM j
     GROUP BY 1, 2, 3, 9, 10, 11
), matched AS (
    INSERT INTO recon_matched
    SELECT l_currency, rows, l_sum, s_sum FROM g WHERE class = 'matched'
), sides AS (
    INSERT INTO recon_sides` + sides + `
    SELECT 'joined', NULL, sum(l_rows), sum(s_rows), NULL FROM g
)
INSERT INTO recon_class (l_id, s_id, class, reason, reference, l_amount, l_currency, s_amount, s_currency)
SELECT l_id, s_id, class,
       CASE class
         WHEN 'amount_mismatch' THEN CASE WHEN sign(l_sum) <> sign(s_sum) THEN 'direction_differs' ELSE 'amount_differs' END
         WHEN 'date_out_of_window' THEN 'value_date_outside_window'
         WHEN 'corrected' THEN 'resolved_by_correction'
         WHEN 'returned' THEN 'returned_in_ledger'
         WHEN 'in_transit' THEN 'after_statement_cutoff'
         WHEN 'missing_in_statement' THEN 'no_statement_line'
         WHEN 'duplicate_in_statement' THEN 'key_repeated_in_statement'
         WHEN 'unbooked_fee' THEN 'fee_not_in_ledger'
         WHEN 'missing_in_ledger' THEN 'no_ledger_posting'
         ELSE class END,
       -- A group of one row: its sums are its amounts.
       reference, l_sum::bigint, l_currency, s_sum::bigint, s_currency
  FROM g
 WHERE class <> 'matched'`
}

// fillLedgerSide and fillStatementSide complete each unpaired row of
// recon_class with the rest of its evidence: its date, kind, key, run and
// line. Fetching them here, for the few items that did not match, rather
// than carrying them through the join for every item, keeps the join's rows
// narrow (docs/BENCHMARKS.md, 2026-12-02, "the pairing's rows narrowed").
// The ids are handed over as one array, so that the side's table is read
// through its id index in id order, which is the order its rows were
// written in: each heap page is visited once, in order, not once per row
// in whatever order the pass grouped them. Each id is on one row: the pass
// lets every item and line out of the join once. As in settleReturns, the
// side's table is read in a query of its own (d), from which the session's
// recon_class is updated.
const fillLedgerSide = `
WITH ids AS MATERIALIZED (
    SELECT array_agg(l_id) AS ids FROM recon_class WHERE l_id IS NOT NULL
), d AS (
    SELECT p.id, p.value_date, p.kind, p.refers_to, p.posting_key, p.run_id, p.line
      FROM postings p, ids
     WHERE p.tenant_id = $1 AND p.id = ANY (ids.ids)
)
UPDATE recon_class c
   SET l_date = d.value_date, l_kind = d.kind, l_refers_to = d.refers_to, l_key = d.posting_key,
       l_run = d.run_id, l_line = d.line
  FROM d
 WHERE c.l_id = d.id`

const fillStatementSide = `
WITH ids AS MATERIALIZED (
    SELECT array_agg(s_id) AS ids FROM recon_class WHERE s_id IS NOT NULL
), d AS (
    SELECT l.id, l.value_date, l.line_type, l.occurrence, l.line_key, l.run_id, l.line
      FROM statement_lines l, ids
     WHERE l.tenant_id = $1 AND l.id = ANY (ids.ids)
)
UPDATE recon_class c
   SET s_date = d.value_date, s_line_type = d.line_type, s_occurrence = d.occurrence, s_key = d.line_key,
       s_run = d.run_id, s_line = d.line
  FROM d
 WHERE c.s_id = d.id`

// sideCounts counts each side per currency from its own scan of l0 and s0,
// not from the join, so that the count of joined rows checks the join: its
// items, its total, and the statement's last date.
const sideCounts = `
    SELECT 'ledger', currency, count(*), sum(amount), NULL::date FROM l0 GROUP BY currency
    UNION ALL
    SELECT 'statement', currency, count(*), coalesce(sum(amount) FILTER (WHERE line_type <> 'settlement_total'), 0),
           max(value_date)
      FROM s0 GROUP BY currency`

// countSides is sideCounts as a query of its own, for a second connection.
func countSides(folds bool) string {
	return `
WITH l0 AS (` + ledgerItems(folds) + `
), s0 AS (` + statementLines + `
)` + sideCounts
}

// settleReturns decides the returns and reversals left alone: a return is
// explained when its original did not pair either (the statement shows
// neither) or lies outside the period; otherwise the statement lacks it.
// The originals are looked up in a query of their own (r), from which the
// session's recon_class is updated: a distributed planner joins a
// temporary table to the tenant's shard in a query, not in an UPDATE.
const settleReturns = `
WITH r AS (
    SELECT r.l_id, r.l_refers_to, r.l_date, o.found
      FROM recon_class r
      LEFT JOIN LATERAL (SELECT true AS found FROM postings o
                          WHERE o.tenant_id = $1 AND o.id = r.l_refers_to AND o.value_date BETWEEN $2 AND $3
                          LIMIT 1) o ON true
     WHERE r.class = 'return_to_check'
)
UPDATE recon_class c
   SET class = v.class,
       reason = CASE v.class WHEN 'returned' THEN 'returned_in_ledger' WHEN 'in_transit' THEN 'after_statement_cutoff'
                             ELSE 'no_statement_line' END
  FROM (SELECT r.l_id, CASE
            WHEN EXISTS (SELECT 1 FROM recon_class o WHERE o.l_id = r.l_refers_to) OR r.found IS NULL
                 THEN 'returned'
            WHEN r.l_date > $4 THEN 'in_transit'
            ELSE 'missing_in_statement' END AS class
          FROM r) v
 WHERE c.class = 'return_to_check' AND c.l_id = v.l_id`

// pairCurrencies pairs what is left alone on both sides under one
// reference but in different currencies: a currency mismatch, one row.
const pairCurrencies = `
WITH l AS (
    SELECT ctid AS row, l_id, reference, row_number() OVER (PARTITION BY reference ORDER BY l_date, l_id) AS rn
      FROM recon_class WHERE s_id IS NULL AND reference <> '' AND class IN ('missing_in_statement', 'in_transit')
), s AS (
    SELECT ctid AS row, s_id, reference, s_amount, s_currency, s_date, s_line_type, s_occurrence, s_key, s_run, s_line,
           row_number() OVER (PARTITION BY reference ORDER BY s_date, s_id) AS rn
      FROM recon_class WHERE l_id IS NULL AND reference <> '' AND class = 'missing_in_ledger'
), pairs AS (
    SELECT l.row AS l_row, s.* FROM l JOIN s USING (reference, rn)
), gone AS (
    DELETE FROM recon_class c USING pairs p WHERE c.ctid = p.row
)
UPDATE recon_class c
   SET s_id = p.s_id, s_amount = p.s_amount, s_currency = p.s_currency, s_date = p.s_date,
       s_line_type = p.s_line_type, s_occurrence = p.s_occurrence, s_key = p.s_key, s_run = p.s_run, s_line = p.s_line,
       class = 'currency_mismatch', reason = 'currency_differs'
  FROM pairs p
 WHERE c.ctid = p.l_row`

// checkSettlements compares each settlement total that settles no group
// (matchGroups) with the net of the ledger's items of its day and
// currency, as the other side settles them: that difference is the break.
var checkSettlements = `
WITH d AS (
    SELECT s.s_date, s.s_currency, coalesce(sum(l.s_amount), 0) AS net,
           format('items of %s in %s', s.s_date, s.s_currency) AS group_id
      FROM (SELECT DISTINCT s_date, s_currency FROM recon_class WHERE class = 'settlement_to_check') s
      LEFT JOIN (` + ledgerItems(true) + `) l ON l.value_date = s.s_date AND l.s_currency = s.s_currency
     GROUP BY s.s_date, s.s_currency
)
UPDATE recon_class c
   SET ledger_net = d.net,
       class  = CASE WHEN abs(c.s_amount - d.net) <= $5 THEN 'matched' ELSE 'settlement_total_mismatch' END,
       reason = CASE WHEN abs(c.s_amount - d.net) <= $5 THEN 'agrees_with_daily_net' ELSE 'settlement_total_differs' END,
       group_id = d.group_id
  FROM d
 WHERE c.class = 'settlement_to_check' AND c.s_date = d.s_date AND c.s_currency = d.s_currency`

// storeClasses records, per currency and class, how many items ended
// there and what they sum to on each side.
const storeClasses = `
INSERT INTO reconciliation_classes (tenant_id, run_id, currency, class, ledger_items, statement_lines,
                                    ledger_amount, statement_amount)
SELECT $1, $2, currency, class, sum(li), sum(sl), sum(la), sum(sa)
  FROM (SELECT currency, 'matched' AS class, pairs AS li, pairs AS sl, ledger_amount AS la, statement_amount AS sa
          FROM recon_matched
        UNION ALL
        SELECT l_currency, class, 1, 0, l_amount, 0 FROM recon_class WHERE l_id IS NOT NULL
        UNION ALL
        SELECT s_currency, class, 0, 1, 0, CASE WHEN s_line_type = 'settlement_total' THEN 0 ELSE s_amount END
          FROM recon_class WHERE s_id IS NOT NULL) x
 GROUP BY currency, class`

// storeDiscrepancies writes every item that did not simply match, with a
// sentence a finance reader understands and both sides' evidence. A
// settlement total that differs keeps the ledger's net of its day, from
// which the report takes its difference. $5 says whether this run proposes
// corrections; when it does not (one side is empty), a break names a
// correction key only when an earlier run proposed that correction, so that
// the report never points at a correction that does not exist and a
// correction proposed before is not taken for stale.
const storeDiscrepancies = `
INSERT INTO discrepancies (tenant_id, run_id, seq, class, reason, is_break, explanation, reference,
                           posting_id, posting_key, posting_kind, ledger_amount, ledger_currency, ledger_date,
                           ledger_run_id, ledger_line, line_id, line_key, line_type, statement_amount,
                           statement_currency, statement_date, statement_run_id, statement_line, correction_key,
                           ledger_net)
SELECT $1, $2, row_number() OVER (ORDER BY c.class, c.reference, c.l_key, c.s_key),
       c.class, c.reason, c.class NOT IN ('corrected', 'returned', 'in_transit', 'settled', 'settlement_member'),
       CASE c.class
         WHEN 'missing_in_ledger' THEN format('statement shows %s for reference %s on %s (line %s); the ledger has no posting for it',
              clearing_side_text(c.s_amount, c.s_currency, es.exponent), c.reference, c.s_date, c.s_key)
         WHEN 'unbooked_fee' THEN format('statement shows a fee, %s, for reference %s on %s; the ledger has not booked it',
              clearing_side_text(c.s_amount, c.s_currency, es.exponent), c.reference, c.s_date)
         WHEN 'duplicate_in_statement' THEN format('statement lists %s again (occurrence %s) with %s on %s; the first occurrence is already accounted for, so this is a second charge',
              c.s_key, c.s_occurrence, clearing_side_text(c.s_amount, c.s_currency, es.exponent), c.s_date)
         WHEN 'settlement_total_mismatch' THEN CASE WHEN c.reason = 'group_total_differs'
              THEN format('statement shows a settlement total of %s on %s for %s; the ledger''s items of that group net to %s; difference %s %s',
              clearing_side_text(c.s_amount, c.s_currency, es.exponent), c.s_date, c.group_id,
              clearing_side_text(c.ledger_net, c.s_currency, es.exponent),
              clearing_amount_text(c.ledger_net - c.s_amount, es.exponent), c.s_currency)
              ELSE format('statement shows a settlement total of %s on %s; the ledger''s postings of that day net to %s; difference %s %s',
              clearing_side_text(c.s_amount, c.s_currency, es.exponent), c.s_date,
              clearing_side_text(c.ledger_net, c.s_currency, es.exponent),
              clearing_amount_text(c.ledger_net - c.s_amount, es.exponent), c.s_currency) END
         WHEN 'settled' THEN format('ledger posted %s for reference %s on %s (%s); the statement settles it in the total of %s on %s (line %s), which nets %s',
              clearing_side_text(c.l_amount, c.l_currency, el.exponent), c.reference, c.l_date, c.l_key,
              clearing_side_text(CASE sl.direction WHEN 'C' THEN sl.amount_minor ELSE -sl.amount_minor END, sl.currency, eg.exponent),
              sl.value_date, sl.line_key, c.group_id)
         WHEN 'settlement_member' THEN format('ledger posted %s for reference %s on %s (%s); it is one of the %s, whose settlement total on the statement (line %s) differs from them: that total''s break holds it',
              clearing_side_text(c.l_amount, c.l_currency, el.exponent), c.reference, c.l_date, c.l_key,
              c.group_id, sl.line_key)
         WHEN 'ambiguous_settlement' THEN format('statement shows a settlement total of %s on %s (line %s); more than one group of ledger items nets to it, so which one it settles is for a person: %s',
              clearing_side_text(c.s_amount, c.s_currency, es.exponent), c.s_date, c.s_key, c.group_id)
         WHEN 'missing_in_statement' THEN format('ledger posted %s for reference %s on %s (%s); the statement has no line for it',
              clearing_side_text(c.l_amount, c.l_currency, el.exponent), c.reference, c.l_date, c.l_key)
         WHEN 'in_transit' THEN format('ledger posted %s for reference %s on %s, after the statement''s last date %s; it is expected on a later statement',
              clearing_side_text(c.l_amount, c.l_currency, el.exponent), c.reference, c.l_date, $4::date)
         WHEN 'returned' THEN format('ledger posted %s for reference %s on %s (%s), and a return or reversal nets it to zero; the statement shows neither',
              clearing_side_text(c.l_amount, c.l_currency, el.exponent), c.reference, c.l_date, c.l_key)
         WHEN 'amount_mismatch' THEN format('statement shows %s for reference %s on %s; ledger posted %s on %s; difference %s %s',
              clearing_side_text(c.s_amount, c.s_currency, es.exponent), c.reference, c.s_date,
              clearing_side_text(c.l_amount, c.l_currency, el.exponent), c.l_date,
              clearing_amount_text(c.l_amount - c.s_amount, el.exponent), c.l_currency)
         WHEN 'currency_mismatch' THEN format('statement shows %s for reference %s on %s; ledger posted %s on %s; the currencies differ',
              clearing_side_text(c.s_amount, c.s_currency, es.exponent), c.reference, c.s_date,
              clearing_side_text(c.l_amount, c.l_currency, el.exponent), c.l_date)
         WHEN 'date_out_of_window' THEN format('statement shows %s for reference %s on %s; ledger posted the same amount on %s, %s days apart, outside the %s-day window',
              clearing_side_text(c.s_amount, c.s_currency, es.exponent), c.reference, c.s_date, c.l_date,
              abs(c.l_date - c.s_date), $3::int)
         WHEN 'corrected' THEN format('statement shows %s for reference %s on %s; the ledger agrees once its approved correction is counted (%s)',
              clearing_side_text(c.s_amount, c.s_currency, es.exponent), c.reference, c.s_date, c.l_key)
       END,
       c.reference,
       c.l_id, c.l_key, c.l_kind, c.l_amount, c.l_currency, c.l_date, c.l_run, c.l_line,
       c.s_id, c.s_key, c.s_line_type, c.s_amount, c.s_currency, c.s_date, c.s_run, c.s_line,
       CASE WHEN $5::boolean THEN k.key
            WHEN EXISTS (SELECT 1 FROM corrections o WHERE o.tenant_id = $1 AND o.correction_key = k.key) THEN k.key END,
       CASE c.class WHEN 'settlement_total_mismatch' THEN c.ledger_net END
  FROM recon_class c
  -- The settlement total that settles an item is named in its sentence,
  -- not as its statement side: the item has no line of its own.
  LEFT JOIN LATERAL (SELECT * FROM statement_lines WHERE c.settled_by IS NOT NULL AND tenant_id = $1
                                                     AND id = c.settled_by LIMIT 1) sl ON true
  CROSS JOIN LATERAL (SELECT CASE c.class WHEN 'amount_mismatch' THEN c.l_key || ':correction:amount_mismatch'
                                          WHEN 'missing_in_ledger' THEN c.s_key || ':correction:missing_in_ledger'
                                          WHEN 'unbooked_fee' THEN c.s_key || ':correction:unbooked_fee' END AS key) k
  LEFT JOIN recon_exponent el ON el.currency = c.l_currency
  LEFT JOIN recon_exponent es ON es.currency = c.s_currency
  LEFT JOIN recon_exponent eg ON eg.currency = sl.currency
 WHERE c.class <> 'matched'`

// storeUnbalanced reports each statement of the source whose closing
// balance falls in the period and whose opening balance plus booked entries
// is not its closing balance: a statement_unbalanced break, after the
// run's other discrepancies. It names no ledger item and no line, so it is
// in neither total: its difference (the closing balance minus what the
// opening balance and the entries make, from the account holder's side) is
// shown beside the bridge, and the statement side of its evidence is the
// closing balance. No correction is proposed: a person asks the bank.
// $1 tenant, $2 run, $3 source, $4 and $5 the period. The statements and the
// run's last seq are read first, as results of their own, so that no
// distributed table is joined to the session's temporary recon_exponent.
const storeUnbalanced = `
WITH b AS MATERIALIZED (
    SELECT * FROM statement_balances
     WHERE tenant_id = $1 AND source = $3 AND closing_date BETWEEN $4 AND $5 AND difference_minor <> 0
), last AS MATERIALIZED (
    SELECT coalesce(max(seq), 0) AS seq FROM discrepancies WHERE tenant_id = $1 AND run_id = $2
)
INSERT INTO discrepancies (tenant_id, run_id, seq, class, reason, is_break, explanation, reference,
                           line_key, line_type, statement_amount, statement_currency, statement_date,
                           statement_run_id, statement_line, statement_difference)
SELECT $1, $2, last.seq + row_number() OVER (ORDER BY b.balance_key),
       'statement_unbalanced', 'balances_do_not_add_up', true,
       format('statement %s opens at %s on %s and books %s of credits and %s of debits, which make %s; it states a closing balance of %s on %s; difference %s %s',
              b.statement_id, clearing_side_text(b.opening_minor, b.currency, e.exponent), coalesce(b.opening_date::text, '(no date)'),
              clearing_amount_text(b.credits_minor, e.exponent), clearing_amount_text(b.debits_minor, e.exponent),
              clearing_side_text(b.opening_minor::numeric + b.credits_minor - b.debits_minor, b.currency, e.exponent),
              clearing_side_text(b.closing_minor, b.currency, e.exponent), b.closing_date,
              clearing_amount_text(b.difference_minor, e.exponent), b.currency),
       b.statement_id, b.balance_key, 'statement_balance', b.closing_minor, b.currency, b.closing_date,
       b.run_id, b.line, b.difference_minor
  FROM b JOIN recon_exponent e ON e.currency = b.currency CROSS JOIN last`
