// Package reconcile compares the ledger with the other side's view: for a
// source and period it pairs postings with statement lines in set-based
// SQL, puts every item in exactly one class, explains every difference,
// bridges the totals, stores the run and its discrepancies, and hands the
// run to package corrections, which proposes the corrections.
//
// It is the only writer of the reconciliation tables (reconciliations,
// reconciliation_totals, reconciliation_classes, discrepancies, and its
// session's scratch tables recon_*). It reads postings and statement
// lines, which packages ledger and statement write, and never writes them;
// statements are imported by package ingest.
package reconcile
