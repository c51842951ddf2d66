package ledger

// Names of the checks that compare postings with what made them.
const (
	checkLegShape  = "every posting's legs are the ones its kind makes"
	checkCorrected = "every correction posting is backed by an approved correction"
)

// legShapeQuery compares every leg with the leg its posting's kind makes
// (internal/ledger's write path):
//   - clearing: leg 1 the posting's account on its side, leg 2 the source's
//     settlement account on the other, both for the posting's amount;
//   - correction: leg 1 the counter account (the posting's account), leg 2
//     the source's settlement account;
//   - reclass: leg 1 the posting's account, leg 2 the account of the
//     correction it reclassifies, on the other side;
//   - return and reversal: each leg of the posting it undoes, on the other
//     side, for the return's own amount; when what it undoes is a correction
//     whose money a reclassification had moved from suspense to the
//     customer by then, the suspense leg is the customer's.
//
// A leg that differs, is missing or is extra is a finding, named by the
// posting's key. Legs of postings that do not exist are left to the check
// "every leg belongs to a posting".
const legShapeQuery = `
WITH p AS MATERIALIZED (
    SELECT id, posting_key, kind, source, account, direction, amount_minor, currency, value_date, refers_to, created_at
      FROM postings WHERE tenant_id = $1
), want AS (
    SELECT p.id AS posting_id, 1::smallint AS leg_no, p.account, p.direction, p.amount_minor, p.currency, p.value_date
      FROM p WHERE p.kind IN ('clearing', 'correction', 'reclass')
    UNION ALL
    SELECT p.id, 2::smallint, CASE WHEN p.kind = 'reclass' THEN o.account ELSE 'settlement:' || p.source END,
           CASE p.direction WHEN 'C' THEN 'D' ELSE 'C' END, p.amount_minor, p.currency, p.value_date
      FROM p LEFT JOIN p o ON p.kind = 'reclass' AND o.id = p.refers_to
     WHERE p.kind IN ('clearing', 'correction', 'reclass')
    UNION ALL
    SELECT p.id, pl.leg_no, coalesce(rc.account, pl.account), CASE pl.direction WHEN 'C' THEN 'D' ELSE 'C' END::char(1),
           p.amount_minor, p.currency, p.value_date
      FROM p JOIN legs pl ON pl.tenant_id = $1 AND pl.posting_id = p.refers_to
      JOIN p par ON par.id = p.refers_to
      LEFT JOIN LATERAL (SELECT r.account FROM p r
                          WHERE par.kind = 'correction' AND pl.account = par.account AND r.kind = 'reclass'
                            AND r.refers_to = par.id AND r.created_at <= p.created_at
                          ORDER BY r.id LIMIT 1) rc ON true
     WHERE p.kind IN ('return', 'reversal')
), have AS (
    SELECT l.posting_id, l.leg_no, l.account, l.direction, l.amount_minor, l.currency, l.value_date
      FROM legs l WHERE l.tenant_id = $1
), diff AS (
    SELECT coalesce(w.posting_id, h.posting_id) AS posting_id, coalesce(w.leg_no, h.leg_no) AS leg_no,
           CASE WHEN h.posting_id IS NULL THEN 'is missing'
                WHEN w.posting_id IS NULL THEN 'is not one its kind makes'
                ELSE 'differs in ' || array_to_string(ARRAY[
                    CASE WHEN h.account IS DISTINCT FROM w.account THEN 'account' END,
                    CASE WHEN h.direction IS DISTINCT FROM w.direction
                         THEN format('direction (%s, want %s)', h.direction, w.direction) END,
                    CASE WHEN h.amount_minor IS DISTINCT FROM w.amount_minor
                         THEN format('amount (%s, want %s)', h.amount_minor, w.amount_minor) END,
                    CASE WHEN h.currency IS DISTINCT FROM w.currency
                         THEN format('currency (%s, want %s)', h.currency, w.currency) END,
                    CASE WHEN h.value_date IS DISTINCT FROM w.value_date
                         THEN format('value date (%s, want %s)', h.value_date, w.value_date) END], ', ')
           END AS problem
      FROM want w FULL JOIN have h ON h.posting_id = w.posting_id AND h.leg_no = w.leg_no
     WHERE w.posting_id IS NULL OR h.posting_id IS NULL
        OR (h.account, h.direction, h.amount_minor, h.currency, h.value_date)
           IS DISTINCT FROM (w.account, w.direction, w.amount_minor, w.currency, w.value_date)
)
SELECT 'legs', p.posting_key, format('%s posting: leg %s %s', p.kind, d.leg_no, d.problem)
  FROM diff d JOIN p ON p.id = d.posting_id
 ORDER BY p.posting_key, d.leg_no`

// correctionQuery finds correction postings that no approved correction
// posted: every posting of kind correction must be the posting_id of a
// correction in status posted, under the same key, amount, currency,
// direction and counter account, with at least one approve decision; and
// every posted correction's posting must exist. It relies on
// corrections.posting_id being set in the transaction that posts, and on
// correction_decisions recording approvals with decision 'approve'.
const correctionQuery = `
SELECT 'postings', p.posting_key,
       CASE WHEN c.id IS NULL THEN 'a correction posting that no correction posted'
            WHEN c.status <> 'posted' THEN format('correction %s is %s, not posted', c.id, c.status)
            WHEN NOT EXISTS (SELECT 1 FROM correction_decisions d
                              WHERE d.tenant_id = $1 AND d.correction_id = c.id AND d.decision = 'approve')
                 THEN format('correction %s has no approval', c.id)
            ELSE format('differs from correction %s (%s) in ', c.id, c.correction_key) || array_to_string(ARRAY[
                 CASE WHEN c.posting_key <> p.posting_key THEN 'key' END,
                 CASE WHEN c.amount_minor <> p.amount_minor THEN format('amount (%s, approved %s)', p.amount_minor, c.amount_minor) END,
                 CASE WHEN c.currency <> p.currency THEN 'currency' END,
                 CASE WHEN c.direction <> p.direction THEN 'direction' END,
                 CASE WHEN c.counter_account <> p.account THEN 'account' END], ', ')
       END
  FROM postings p
  LEFT JOIN LATERAL (SELECT * FROM corrections c
                      WHERE c.tenant_id = $1 AND c.posting_id = p.id ORDER BY c.id LIMIT 1) c ON true
 WHERE p.tenant_id = $1 AND p.kind = 'correction'
   AND (c.id IS NULL OR c.status <> 'posted'
        OR NOT EXISTS (SELECT 1 FROM correction_decisions d
                        WHERE d.tenant_id = $1 AND d.correction_id = c.id AND d.decision = 'approve')
        OR c.posting_key <> p.posting_key OR c.amount_minor <> p.amount_minor OR c.currency <> p.currency
        OR c.direction <> p.direction OR c.counter_account <> p.account)
UNION ALL
SELECT 'corrections', c.correction_key, format('posted, but its posting %s is not a correction posting of the ledger', c.posting_id)
  FROM corrections c
 WHERE c.tenant_id = $1 AND c.status = 'posted'
   AND NOT EXISTS (SELECT 1 FROM postings p WHERE p.tenant_id = $1 AND p.id = c.posting_id AND p.kind = 'correction')
 ORDER BY 1, 2`
