-- Cheaper writes on the ingest path: a leg check that only aggregates the
-- statement's legs, slim audit rows for duplicates, and a BRIN index where
-- runs arrive in order. docs/BENCHMARKS.md records what each bought.

-- +goose Up

-- The leg check keeps to what only the database can see in the statement
-- that writes legs: every posting they name balances per currency and has
-- at least two legs. It no longer looks each posting up: the ledger writes
-- legs from the rows its INSERT ... RETURNING just produced, and `clearing
-- ledger verify` checks that every leg's posting exists. The lookup was 40%
-- of the time it took to post a chunk (docs/BENCHMARKS.md).
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION clearing_check_legs() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    bad record;
BEGIN
    SELECT n.posting_id, n.currency,
           sum(CASE n.direction WHEN 'C' THEN n.amount_minor ELSE -n.amount_minor END) AS net,
           count(*) AS legs
      INTO bad
      FROM new_legs n
     GROUP BY n.posting_id, n.currency
    HAVING sum(CASE n.direction WHEN 'C' THEN n.amount_minor ELSE -n.amount_minor END) <> 0
        OR count(*) < 2
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'clearing: posting % does not balance in %: net % over % leg(s)',
            bad.posting_id, bad.currency, bad.net, bad.legs
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

-- A duplicate's content is the posting's it collided with; its audit row
-- keeps only where it arrived and what it met.
ALTER TABLE audit_events
    ALTER COLUMN amount_minor DROP NOT NULL,
    ALTER COLUMN currency DROP NOT NULL,
    ALTER COLUMN direction DROP NOT NULL,
    ALTER COLUMN value_date DROP NOT NULL,
    ALTER COLUMN digest DROP NOT NULL;

-- Runs arrive in id order, so a BRIN index finds a run's events for a
-- fraction of a B-tree's upkeep.
DROP INDEX audit_events_run;
CREATE INDEX audit_events_run ON audit_events USING brin (tenant_id, run_id);

-- +goose Down
DROP INDEX audit_events_run;
CREATE INDEX audit_events_run ON audit_events (tenant_id, run_id);
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION clearing_check_legs() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    bad record;
BEGIN
    SELECT n.tenant_id, n.posting_id, n.currency,
           sum(CASE n.direction WHEN 'C' THEN n.amount_minor ELSE -n.amount_minor END) AS net,
           count(*) AS legs
      INTO bad
      FROM new_legs n
     GROUP BY n.tenant_id, n.posting_id, n.currency
    HAVING sum(CASE n.direction WHEN 'C' THEN n.amount_minor ELSE -n.amount_minor END) <> 0
        OR count(*) < 2
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'clearing: posting % does not balance in %: net % over % leg(s)',
            bad.posting_id, bad.currency, bad.net, bad.legs
            USING ERRCODE = 'check_violation';
    END IF;
    SELECT n.posting_id INTO bad
      FROM new_legs n
     WHERE NOT EXISTS (SELECT 1 FROM postings p WHERE p.tenant_id = n.tenant_id AND p.id = n.posting_id)
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'clearing: leg refers to missing posting %', bad.posting_id
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
