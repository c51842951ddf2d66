-- The late-arrival rule of ingest (internal/ledger/settle.go) finds the
-- posted missing_in_ledger corrections of a source by their postings, not
-- by the corrections table, which belongs to the corrections package
-- (docs/decisions/late-arrivals-read-the-ledger.md). Such a posting is one
-- of kind correction with the detail 'correction of missing_in_ledger':
-- only clearing_post_correction (00007) writes kind correction, and it
-- writes the detail 'correction of ' || class.
--
-- Ingest asks once per chunk whether the source has one. This partial index
-- holds those postings alone, so the question is answered from a few index
-- pages however large the ledger is. It leads with the column it finds rows
-- by and carries the tenant second, as the other secondary indexes of
-- postings do (00005, docs/decisions/tenant-unknown-to-the-planner.md). The
-- queries name its predicate with the same constants (settle.go's
-- missingInLedger), so that the planner can prove it and use the index.

-- +goose Up
CREATE INDEX postings_missing_in_ledger ON postings (source, tenant_id)
    WHERE kind = 'correction' AND detail = 'correction of missing_in_ledger';

-- +goose Down
DROP INDEX postings_missing_in_ledger;
