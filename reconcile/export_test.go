package reconcile

// DiscrepanciesOfRun is the statement that loads a run's discrepancies, for
// the test of its plan.
const DiscrepanciesOfRun = discrepanciesOfRun
