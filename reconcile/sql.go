package reconcile

// The reconciliation is a handful of set-based statements over temporary
// tables that live for the run's transaction:
//
//	recon_ledger     the postings of the source and period, each with its
//	                 approved corrections folded in (signed minor units)
//	recon_statement  the statement lines of the source and period
//	recon_pair       one-to-one pairs on reference (and currency)
//	recon_class      every ledger item and every line, in exactly one class
//
// Amounts are signed from the counterparty's side: a credit to the
// counterparty is positive on both sides, so a matched pair has equal
// amounts and a difference is ledger minus statement.

// gatherLedger reads the ledger side. A correction that adjusts a posting
// (amount mismatch) is folded into that posting; a correction that stands
// alone (money the ledger lacked, an unbooked fee) is an item of its own.
const gatherLedger = `
CREATE TEMP TABLE recon_ledger ON COMMIT DROP AS
SELECT p.id, p.posting_key AS key, p.kind, coalesce(p.reference, '') AS reference, p.currency::text AS currency,
       p.value_date, p.run_id, p.line, p.refers_to,
       (CASE p.direction WHEN 'C' THEN p.amount_minor ELSE -p.amount_minor END) + coalesce(c.adjustment, 0)::bigint AS amount,
       (c.refers_to IS NOT NULL OR p.kind = 'correction') AS corrected
  FROM postings p
  LEFT JOIN (SELECT refers_to, sum(CASE direction WHEN 'C' THEN amount_minor ELSE -amount_minor END) AS adjustment
               FROM postings
              WHERE tenant_id = $1 AND refers_to IS NOT NULL AND kind = 'correction'
              GROUP BY refers_to) c ON c.refers_to = p.id
 WHERE p.tenant_id = $1 AND p.source = $2 AND p.value_date BETWEEN $3 AND $4
   AND p.kind IN ('clearing', 'return', 'reversal', 'correction')
   AND NOT (p.kind = 'correction' AND p.refers_to IS NOT NULL)`

const gatherStatement = `
CREATE TEMP TABLE recon_statement ON COMMIT DROP AS
SELECT l.id, l.line_key AS key, l.occurrence, l.reference, l.currency::text AS currency, l.value_date,
       l.line_type, l.run_id, l.line,
       CASE l.direction WHEN 'C' THEN l.amount_minor ELSE -l.amount_minor END AS amount
  FROM statement_lines l
 WHERE l.tenant_id = $1 AND l.source = $2 AND l.value_date BETWEEN $3 AND $4`

// pairItems pairs ledger items and statement lines one to one. Within a
// reference and currency, the k-th item by amount and date pairs with the
// k-th line, so repeated references pair like with like. Lines that repeat
// a key and settlement totals never pair. What is left pairs again on the
// reference alone, which can only join different currencies.
const pairItems = `
CREATE TEMP TABLE recon_pair ON COMMIT DROP AS
WITH l AS (
    SELECT id, reference, currency,
           row_number() OVER (PARTITION BY reference, currency ORDER BY amount, value_date, key) AS rn
      FROM recon_ledger WHERE reference <> ''
), s AS (
    SELECT id, reference, currency,
           row_number() OVER (PARTITION BY reference, currency ORDER BY amount, value_date, key) AS rn
      FROM recon_statement WHERE reference <> '' AND occurrence = 1 AND line_type <> 'settlement_total'
)
SELECT l.id AS l_id, s.id AS s_id FROM l JOIN s USING (reference, currency, rn)
UNION ALL
SELECT l.id, s.id
  FROM (SELECT r.id, r.reference, row_number() OVER (PARTITION BY r.reference ORDER BY r.value_date, r.key) AS rn
          FROM recon_ledger r
         WHERE r.reference <> ''
           AND r.id NOT IN (SELECT l.id FROM l JOIN s USING (reference, currency, rn))) l
  JOIN (SELECT r.id, r.reference, row_number() OVER (PARTITION BY r.reference ORDER BY r.value_date, r.key) AS rn
          FROM recon_statement r
         WHERE r.reference <> '' AND r.occurrence = 1 AND r.line_type <> 'settlement_total'
           AND r.id NOT IN (SELECT s.id FROM l JOIN s USING (reference, currency, rn))) s
 USING (reference, rn)`

// classify puts every ledger item and every statement line in exactly one
// class: paired ones by how they differ, unpaired ledger items as returned,
// in transit or missing from the statement, unpaired lines as repeated,
// settlement totals, fees or missing from the ledger. An unpaired original
// is returned when a return or reversal of its full amount exists, whatever
// its date (returns arrive days later); an unpaired return is returned when
// its original did not pair either.
const classify = `
CREATE TEMP TABLE recon_class ON COMMIT DROP AS
WITH last AS (SELECT max(value_date) AS d FROM recon_statement),
unpaired_l AS (
    SELECT r.* FROM recon_ledger r WHERE NOT EXISTS (SELECT 1 FROM recon_pair p WHERE p.l_id = r.id)
), unpaired_s AS (
    SELECT r.* FROM recon_statement r WHERE NOT EXISTS (SELECT 1 FROM recon_pair p WHERE p.s_id = r.id)
), daily AS (
    SELECT value_date, currency, sum(amount)::bigint AS net FROM recon_ledger GROUP BY value_date, currency
)
SELECT p.l_id, p.s_id, x.class, x.reason, NULL::bigint AS ledger_net
  FROM recon_pair p
  JOIN recon_ledger l ON l.id = p.l_id
  JOIN recon_statement s ON s.id = p.s_id
 CROSS JOIN LATERAL (SELECT * FROM (VALUES
       (CASE WHEN l.currency <> s.currency THEN 'currency_mismatch'
             WHEN abs(l.amount - s.amount) > $2 THEN 'amount_mismatch'
             WHEN abs(l.value_date - s.value_date) > $1 THEN 'date_out_of_window'
             WHEN l.corrected THEN 'corrected'
             ELSE 'matched' END,
        CASE WHEN l.currency <> s.currency THEN 'currency_differs'
             WHEN abs(l.amount - s.amount) > $2 AND sign(l.amount) <> sign(s.amount) THEN 'direction_differs'
             WHEN abs(l.amount - s.amount) > $2 THEN 'amount_differs'
             WHEN abs(l.value_date - s.value_date) > $1 THEN 'value_date_outside_window'
             WHEN l.corrected THEN 'resolved_by_correction'
             ELSE 'agrees' END)) AS v(class, reason)) x
UNION ALL
SELECT u.id, NULL,
       CASE WHEN ret THEN 'returned' WHEN u.value_date > last.d THEN 'in_transit' ELSE 'missing_in_statement' END,
       CASE WHEN ret THEN 'returned_in_ledger' WHEN u.value_date > last.d THEN 'after_statement_cutoff'
            ELSE 'no_statement_line' END,
       NULL
  FROM unpaired_l u CROSS JOIN last
 CROSS JOIN LATERAL (SELECT CASE
       WHEN u.kind = 'clearing' THEN EXISTS (
            SELECT 1 FROM postings r
             WHERE r.tenant_id = $3 AND r.refers_to = u.id AND r.kind IN ('return', 'reversal')
               AND r.amount_minor = abs(u.amount))
       WHEN u.kind IN ('return', 'reversal') THEN NOT EXISTS (
            SELECT 1 FROM recon_ledger o WHERE o.id = u.refers_to AND o.id NOT IN (SELECT id FROM unpaired_l))
       ELSE false END AS ret) x
UNION ALL
SELECT NULL, u.id,
       CASE WHEN u.occurrence > 1 THEN 'duplicate_in_statement'
            WHEN u.line_type = 'settlement_total' AND abs(u.amount - coalesce(d.net, 0)) <= $2 THEN 'matched'
            WHEN u.line_type = 'settlement_total' THEN 'settlement_total_mismatch'
            WHEN u.line_type = 'fee' THEN 'unbooked_fee'
            ELSE 'missing_in_ledger' END,
       CASE WHEN u.occurrence > 1 THEN 'key_repeated_in_statement'
            WHEN u.line_type = 'settlement_total' AND abs(u.amount - coalesce(d.net, 0)) <= $2 THEN 'agrees_with_daily_net'
            WHEN u.line_type = 'settlement_total' THEN 'settlement_total_differs'
            WHEN u.line_type = 'fee' THEN 'fee_not_in_ledger'
            ELSE 'no_ledger_posting' END,
       coalesce(d.net, 0)
  FROM unpaired_s u
  LEFT JOIN daily d ON d.value_date = u.value_date AND d.currency = u.currency`

// storeTotals records the two raw totals per currency and, per currency
// and class, what each side's items sum to. Settlement totals summarise
// lines the statement also lists one by one, so they stay out of both.
const storeTotals = `
WITH t AS (
    INSERT INTO reconciliation_totals (tenant_id, run_id, currency, ledger_total, statement_total)
    SELECT $1, $2, currency, sum(ledger), sum(statement)
      FROM (SELECT currency, amount AS ledger, 0 AS statement FROM recon_ledger
            UNION ALL
            SELECT currency, 0, amount FROM recon_statement WHERE line_type <> 'settlement_total') x
     GROUP BY currency
)
INSERT INTO reconciliation_classes (tenant_id, run_id, currency, class, ledger_items, statement_lines,
                                    ledger_amount, statement_amount)
SELECT $1, $2, currency, class, sum(li), sum(sl), sum(la), sum(sa)
  FROM (SELECT l.currency, c.class, 1 AS li, 0 AS sl, l.amount AS la, 0 AS sa
          FROM recon_class c JOIN recon_ledger l ON l.id = c.l_id
        UNION ALL
        SELECT s.currency, c.class, 0, 1, 0, CASE WHEN s.line_type = 'settlement_total' THEN 0 ELSE s.amount END
          FROM recon_class c JOIN recon_statement s ON s.id = c.s_id) x
 GROUP BY currency, class`

// storeDiscrepancies writes every item that did not simply match, with a
// sentence a finance reader understands and both sides' evidence.
const storeDiscrepancies = `
INSERT INTO discrepancies (tenant_id, run_id, seq, class, reason, is_break, explanation, reference,
                           posting_id, posting_key, posting_kind, ledger_amount, ledger_currency, ledger_date,
                           ledger_run_id, ledger_line, line_id, line_key, line_type, statement_amount,
                           statement_currency, statement_date, statement_run_id, statement_line, correction_key)
SELECT $1, $2, row_number() OVER (ORDER BY c.class, coalesce(l.reference, s.reference), l.key, s.key),
       c.class, c.reason, c.class NOT IN ('corrected', 'returned', 'in_transit'),
       CASE c.class
         WHEN 'missing_in_ledger' THEN format('statement shows %s for reference %s on %s (line %s); the ledger has no posting for it',
              clearing_side_text(s.amount, s.currency, es.exponent), s.reference, s.value_date, s.key)
         WHEN 'unbooked_fee' THEN format('statement shows a fee, %s, for reference %s on %s; the ledger has not booked it',
              clearing_side_text(s.amount, s.currency, es.exponent), s.reference, s.value_date)
         WHEN 'duplicate_in_statement' THEN format('statement lists %s again (occurrence %s) with %s on %s; the first occurrence is already accounted for, so this is a second charge',
              s.key, s.occurrence, clearing_side_text(s.amount, s.currency, es.exponent), s.value_date)
         WHEN 'settlement_total_mismatch' THEN format('statement shows a settlement total of %s on %s; the ledger''s postings of that day net to %s; difference %s %s',
              clearing_side_text(s.amount, s.currency, es.exponent), s.value_date,
              clearing_side_text(c.ledger_net, s.currency, es.exponent),
              clearing_amount_text(c.ledger_net - s.amount, es.exponent), s.currency)
         WHEN 'missing_in_statement' THEN format('ledger posted %s for reference %s on %s (%s); the statement has no line for it',
              clearing_side_text(l.amount, l.currency, el.exponent), l.reference, l.value_date, l.key)
         WHEN 'in_transit' THEN format('ledger posted %s for reference %s on %s, after the statement''s last date %s; it is expected on a later statement',
              clearing_side_text(l.amount, l.currency, el.exponent), l.reference, l.value_date,
              (SELECT max(value_date) FROM recon_statement))
         WHEN 'returned' THEN format('ledger posted %s for reference %s on %s (%s), and a return or reversal nets it to zero; the statement shows neither',
              clearing_side_text(l.amount, l.currency, el.exponent), l.reference, l.value_date, l.key)
         WHEN 'amount_mismatch' THEN format('statement shows %s for reference %s on %s; ledger posted %s on %s; difference %s %s',
              clearing_side_text(s.amount, s.currency, es.exponent), s.reference, s.value_date,
              clearing_side_text(l.amount, l.currency, el.exponent), l.value_date,
              clearing_amount_text(l.amount - s.amount, el.exponent), l.currency)
         WHEN 'currency_mismatch' THEN format('statement shows %s for reference %s on %s; ledger posted %s on %s; the currencies differ',
              clearing_side_text(s.amount, s.currency, es.exponent), s.reference, s.value_date,
              clearing_side_text(l.amount, l.currency, el.exponent), l.value_date)
         WHEN 'date_out_of_window' THEN format('statement shows %s for reference %s on %s; ledger posted the same amount on %s, %s days apart, outside the %s-day window',
              clearing_side_text(s.amount, s.currency, es.exponent), s.reference, s.value_date, l.value_date,
              abs(l.value_date - s.value_date), $3::int)
         WHEN 'corrected' THEN format('statement shows %s for reference %s on %s; the ledger agrees once its approved correction is counted (%s)',
              clearing_side_text(s.amount, s.currency, es.exponent), s.reference, s.value_date, l.key)
       END,
       coalesce(l.reference, s.reference),
       l.id, l.key, l.kind, l.amount, l.currency, l.value_date, l.run_id, l.line,
       s.id, s.key, s.line_type, s.amount, s.currency, s.value_date, s.run_id, s.line,
       CASE c.class WHEN 'amount_mismatch' THEN l.key || ':correction:amount_mismatch'
                    WHEN 'missing_in_ledger' THEN s.key || ':correction:missing_in_ledger'
                    WHEN 'unbooked_fee' THEN s.key || ':correction:unbooked_fee' END
  FROM recon_class c
  LEFT JOIN recon_ledger l ON l.id = c.l_id
  LEFT JOIN recon_statement s ON s.id = c.s_id
  LEFT JOIN recon_exponent el ON el.currency = l.currency
  LEFT JOIN recon_exponent es ON es.currency = s.currency
 WHERE c.class <> 'matched'`

// proposeCorrections proposes, for each break that a posting can settle, a
// correction under a key derived from what it corrects. Proposing the same
// correction again (a re-run, a concurrent run) adds nothing, and a
// rejected correction is not proposed again.
const proposeCorrections = `
INSERT INTO corrections (tenant_id, correction_key, posting_key, class, source, reference, refers_to, line_id,
                         amount_minor, currency, direction, counter_account, settlement_account, value_date,
                         explanation, proposed_by_run)
SELECT $1, d.correction_key, CASE d.class WHEN 'missing_in_ledger' THEN d.line_key ELSE d.correction_key END,
       d.class, $3, d.reference, d.posting_id, d.line_id, abs(d.delta), d.currency,
       CASE WHEN d.delta > 0 THEN 'C' ELSE 'D' END,
       CASE d.class WHEN 'missing_in_ledger' THEN $5 ELSE $4 END, 'settlement:' || $3,
       d.value_date, d.explanation, $2
  FROM (SELECT *, CASE class WHEN 'amount_mismatch' THEN statement_amount - ledger_amount ELSE statement_amount END AS delta,
               coalesce(ledger_currency, statement_currency) AS currency,
               coalesce(statement_date, ledger_date) AS value_date
          FROM discrepancies
         WHERE tenant_id = $1 AND run_id = $2 AND correction_key IS NOT NULL) d
 WHERE d.delta <> 0
 ORDER BY d.correction_key
ON CONFLICT (tenant_id, correction_key) DO NOTHING`

const finishRun = `
UPDATE reconciliations
   SET statement_last_date = (SELECT max(value_date) FROM recon_statement),
       ledger_items = (SELECT count(*) FROM recon_ledger),
       statement_lines = (SELECT count(*) FROM recon_statement),
       matched_ledger = (SELECT count(*) FROM recon_class WHERE l_id IS NOT NULL AND class IN ('matched', 'corrected')),
       matched_statement = (SELECT count(*) FROM recon_class WHERE s_id IS NOT NULL AND class IN ('matched', 'corrected'))
 WHERE tenant_id = $1 AND id = $2`
