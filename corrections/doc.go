// Package corrections owns the corrections that reconciliation proposes
// and the operators' decisions on them: proposals, approvals under four
// eyes, rejections, and the check that a correction is still needed.
//
// It is the only writer of the tables corrections and correction_decisions.
// Reconciliation hands it the run it just stored (Propose, in the
// reconciliation's own transaction), and the proposals are derived from that
// run's discrepancies by one set-based statement. Decisions go through the
// database's SECURITY DEFINER functions clearing_approve and clearing_reject,
// which record the login themselves (docs/decisions/four-eyes-logins.md).
//
// The package never writes postings or legs. An approved correction is
// posted only through internal/ledger (ledger.PostCorrection, that is the
// database function clearing_post_correction), in the transaction that
// records the last approval, so the ledger's unique key stays the arbiter:
// approving twice posts once.
//
// It reads what reconciliation and the ledger own (reconciliations,
// discrepancies, postings, statement_lines) to tell a stale correction from
// one still needed, and writes none of them.
package corrections
