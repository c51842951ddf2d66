-- A settlement total that differs from the ledger keeps the ledger's net
-- of its day and currency, so that the report can show the real difference
-- (net minus the total) and not only a sentence that names it. It is a sum
-- of items, so numeric, like the other sums reconciliation stores (00009).
-- Runs stored before this migration have no net: their settlement-total
-- breaks keep a difference of 0 and their explanation.

-- +goose Up
ALTER TABLE discrepancies ADD COLUMN ledger_net numeric;

-- +goose Down
ALTER TABLE discrepancies DROP COLUMN ledger_net;
