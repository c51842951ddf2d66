-- One record's amount is capped at 10^15 minor units (formats.MaxAmountMinor;
-- docs/decisions/amount-cap-and-exact-sums.md), and the sums that
-- reconciliation stores are numeric, because a sum of many capped amounts
-- can still pass the bigint range: ten thousand postings of 10^15 do.
--
-- The readers refuse an amount above the cap before anything is written;
-- these constraints are the database's own copy of that rule, for any path
-- that does not go through a reader. They are NOT VALID: they hold for every
-- row written from now on, and a ledger that already holds a larger amount
-- (the ledger is append-only, so nothing can take it out) still migrates.
-- Balances and totals are exact whatever the rows hold, since they are
-- summed as numeric.

-- +goose Up
ALTER TABLE postings ADD CONSTRAINT postings_amount_cap CHECK (amount_minor <= 1000000000000000) NOT VALID;
ALTER TABLE legs ADD CONSTRAINT legs_amount_cap CHECK (amount_minor <= 1000000000000000) NOT VALID;
ALTER TABLE statement_lines ADD CONSTRAINT statement_lines_amount_cap CHECK (amount_minor <= 1000000000000000) NOT VALID;
ALTER TABLE audit_events ADD CONSTRAINT audit_events_amount_cap CHECK (amount_minor <= 1000000000000000) NOT VALID;

ALTER TABLE reconciliation_totals
    ALTER COLUMN ledger_total TYPE numeric,
    ALTER COLUMN statement_total TYPE numeric;
ALTER TABLE reconciliation_classes
    ALTER COLUMN ledger_amount TYPE numeric,
    ALTER COLUMN statement_amount TYPE numeric;

-- The explanations write a day's ledger net, a sum, in words: numeric
-- twins of the bigint functions of 00002, exact at any size.
CREATE FUNCTION clearing_amount_text(minor numeric, exponent integer) RETURNS text
LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT CASE WHEN minor < 0 THEN '-' ELSE '' END
        || round(abs(minor) / (10::numeric ^ exponent), exponent)::text
$$;

CREATE FUNCTION clearing_side_text(amount numeric, currency text, exponent integer) RETURNS text
LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT CASE WHEN amount < 0 THEN 'a debit of ' ELSE 'a credit of ' END
        || clearing_amount_text(abs(amount), exponent) || ' ' || currency
$$;

-- +goose Down
DROP FUNCTION clearing_side_text(numeric, text, integer);
DROP FUNCTION clearing_amount_text(numeric, integer);
-- Totals beyond the bigint range cannot go back; the Down fails on them
-- rather than cut them.
ALTER TABLE reconciliation_classes
    ALTER COLUMN ledger_amount TYPE bigint,
    ALTER COLUMN statement_amount TYPE bigint;
ALTER TABLE reconciliation_totals
    ALTER COLUMN ledger_total TYPE bigint,
    ALTER COLUMN statement_total TYPE bigint;
ALTER TABLE audit_events DROP CONSTRAINT audit_events_amount_cap;
ALTER TABLE statement_lines DROP CONSTRAINT statement_lines_amount_cap;
ALTER TABLE legs DROP CONSTRAINT legs_amount_cap;
ALTER TABLE postings DROP CONSTRAINT postings_amount_cap;
