-- Seals: what each statement wrote to the append-only tables, so that an
-- edit or a deletion made while their triggers were off shows.
--
-- Every INSERT into postings, legs, notices or audit_events writes, once per
-- statement and per tenant and run, a seal row: how many rows it wrote, the
-- sum of their amounts, and the sum (mod 2^63) of a hash of each row. The
-- sum is order-independent, so `clearing ledger verify`
-- recomputes it from the rows as they are now, grouped by run, and compares
-- it with the seals of that run: a changed, deleted or unsealed row changes
-- the totals. Each seal is chained by hash to the latest seal of its tenant
-- that the writing transaction could see, so a seal cannot be deleted or
-- edited without breaking the seals that came after it.
--
-- The triggers run once per statement over its transition table, like
-- legs_balance: a chunk of 20,000 postings costs one seal, not 20,000 row
-- triggers. The seal table is written only by the trigger function, which
-- runs as the schema owner (SECURITY DEFINER, with a fixed search_path):
-- the clearing_* roles produce seals but cannot write them.
--
-- What this does not stop: the owner or a superuser can recompute every
-- seal after the fact. docs/decisions/tamper-evidence.md says where
-- protection ends.

-- +goose Up

CREATE TABLE seals (
    tenant_id    text    NOT NULL,
    id           bigint  GENERATED ALWAYS AS IDENTITY,
    table_name   text    NOT NULL CHECK (table_name IN ('postings', 'legs', 'notices', 'audit_events')),
    -- run_id groups a table's rows for verification: the run that wrote
    -- them (NULL for corrections, which no run writes, and for legs, which
    -- carry no run).
    run_id       bigint,
    row_count    bigint  NOT NULL CHECK (row_count > 0),
    amount_minor numeric NOT NULL,
    row_hash     bigint  NOT NULL CHECK (row_hash >= 0),
    -- prev_hash is the hash of the latest seal of the tenant the writing
    -- transaction saw; NULL for a tenant's first seals.
    prev_hash    bytea,
    hash         bytea   NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);

CREATE TRIGGER seals_append_only BEFORE UPDATE OR DELETE ON seals
    FOR EACH ROW EXECUTE FUNCTION clearing_reject_change();
CREATE TRIGGER seals_no_truncate BEFORE TRUNCATE ON seals
    FOR EACH STATEMENT EXECUTE FUNCTION clearing_reject_change();

-- A row's hash: PostgreSQL's own 64-bit hash of the row's columns (every
-- column but created_at), through each type's extended hash function, the
-- ones hash partitioning relies on never changing. Cut to 63 bits so that
-- sums of them mod 2^63 fit a bigint. No text is built: formatting a row
-- as text and taking its SHA-256 cost eight times as much per row on the
-- ingest path (docs/decisions/tamper-evidence.md). A column added later does
-- not enter the hash, so old seals still hold.
CREATE FUNCTION clearing_seal_hash_postings(p postings) RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT hash_record_extended(ROW(p.tenant_id, p.id, p.posting_key, p.kind, p.source, p.reference, p.alt_reference,
               p.value_date, p.amount_minor, p.currency, p.direction, p.account, p.account_last4, p.digest,
               p.refers_to, p.run_id, p.record_no, p.line, p.detail), 0) & 9223372036854775807
$$;

CREATE FUNCTION clearing_seal_hash_legs(l legs) RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT hash_record_extended(ROW(l.tenant_id, l.posting_id, l.leg_no, l.account, l.direction, l.amount_minor,
               l.currency, l.value_date), 0) & 9223372036854775807
$$;

CREATE FUNCTION clearing_seal_hash_notices(n notices) RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT hash_record_extended(ROW(n.tenant_id, n.id, n.notice_key, n.source, n.reference, n.posting_id, n.value_date,
               n.amount_minor, n.currency, n.direction, n.account, n.account_last4, n.digest, n.run_id,
               n.record_no, n.line, n.detail), 0) & 9223372036854775807
$$;

CREATE FUNCTION clearing_seal_hash_audit_events(e audit_events) RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT hash_record_extended(ROW(e.tenant_id, e.id, e.record_key, e.own_key, e.verdict, e.needs_attention,
               e.run_id, e.record_no, e.line, e.existing_posting_id, e.existing_notice_id, e.existing_line_id,
               e.differing_fields, e.kind, e.reference, e.amount_minor, e.currency, e.direction, e.account,
               e.account_last4, e.value_date, e.digest, e.link_reference, e.link_prefix, e.link_suffix,
               e.detail), 0) & 9223372036854775807
$$;

-- clearing_seal_link is a seal's hash: its content chained to the hash of
-- the seal before it.
CREATE FUNCTION clearing_seal_link(prev bytea, tenant text, tbl text, run bigint, n bigint, amount numeric, h bigint)
RETURNS bytea LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT sha256(coalesce(prev, ''::bytea) || convert_to(quote_nullable(tenant) || '|' || quote_nullable(tbl)
        || '|' || quote_nullable(run::text) || '|' || quote_nullable(n::text) || '|' || quote_nullable(amount::text)
        || '|' || quote_nullable(h::text), 'UTF8'))
$$;

-- clearing_seal_append writes one seal, chained to the tenant's latest. It
-- has no rights of its own: only the owner, and the trigger function that
-- runs as the owner, can insert seals.
-- +goose StatementBegin
CREATE FUNCTION clearing_seal_append(p_tenant text, p_table text, p_run bigint, p_rows bigint, p_amount numeric, p_hash bigint)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    prev bytea;
BEGIN
    SELECT s.hash INTO prev FROM seals s WHERE s.tenant_id = p_tenant ORDER BY s.id DESC LIMIT 1;
    INSERT INTO seals (tenant_id, table_name, run_id, row_count, amount_minor, row_hash, prev_hash, hash)
    VALUES (p_tenant, p_table, p_run, p_rows, p_amount, p_hash, prev,
            clearing_seal_link(prev, p_tenant, p_table, p_run, p_rows, p_amount, p_hash));
END;
$$;
-- +goose StatementEnd

-- clearing_seal seals the rows one INSERT statement wrote, one seal per
-- tenant and run. The transition table is named new_rows on every table.
-- +goose StatementBegin
CREATE FUNCTION clearing_seal() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    g record;
BEGIN
    IF TG_TABLE_NAME = 'postings' THEN
        FOR g IN SELECT n.tenant_id, n.run_id, count(*) AS n, sum(n.amount_minor) AS amount,
                        sum(clearing_seal_hash_postings(n)) % 9223372036854775808 AS h
                   FROM new_rows n GROUP BY n.tenant_id, n.run_id ORDER BY n.tenant_id, n.run_id LOOP
            PERFORM clearing_seal_append(g.tenant_id, 'postings', g.run_id, g.n, g.amount, g.h::bigint);
        END LOOP;
    ELSIF TG_TABLE_NAME = 'legs' THEN
        FOR g IN SELECT n.tenant_id, count(*) AS n, sum(n.amount_minor) AS amount,
                        sum(clearing_seal_hash_legs(n)) % 9223372036854775808 AS h
                   FROM new_rows n GROUP BY n.tenant_id ORDER BY n.tenant_id LOOP
            PERFORM clearing_seal_append(g.tenant_id, 'legs', NULL, g.n, g.amount, g.h::bigint);
        END LOOP;
    ELSIF TG_TABLE_NAME = 'notices' THEN
        FOR g IN SELECT n.tenant_id, n.run_id, count(*) AS n, sum(n.amount_minor) AS amount,
                        sum(clearing_seal_hash_notices(n)) % 9223372036854775808 AS h
                   FROM new_rows n GROUP BY n.tenant_id, n.run_id ORDER BY n.tenant_id, n.run_id LOOP
            PERFORM clearing_seal_append(g.tenant_id, 'notices', g.run_id, g.n, g.amount, g.h::bigint);
        END LOOP;
    ELSIF TG_TABLE_NAME = 'audit_events' THEN
        FOR g IN SELECT n.tenant_id, n.run_id, count(*) AS n, coalesce(sum(n.amount_minor), 0) AS amount,
                        sum(clearing_seal_hash_audit_events(n)) % 9223372036854775808 AS h
                   FROM new_rows n GROUP BY n.tenant_id, n.run_id ORDER BY n.tenant_id, n.run_id LOOP
            PERFORM clearing_seal_append(g.tenant_id, 'audit_events', g.run_id, g.n, g.amount, g.h::bigint);
        END LOOP;
    ELSE
        RAISE EXCEPTION 'clearing: no seal is defined for %', TG_TABLE_NAME;
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

-- A SECURITY DEFINER function must not find tables through a search_path
-- its caller controls (a temporary table named seals, say): it searches the
-- schema the migration ran in, and pg_temp last.
-- +goose StatementBegin
DO $$
BEGIN
    EXECUTE format('ALTER FUNCTION clearing_seal() SET search_path = %I, pg_temp', current_schema());
    EXECUTE format('ALTER FUNCTION clearing_seal_append(text, text, bigint, bigint, numeric, bigint) SET search_path = %I, pg_temp',
                   current_schema());
END
$$;
-- +goose StatementEnd

REVOKE EXECUTE ON FUNCTION clearing_seal_append(text, text, bigint, bigint, numeric, bigint) FROM PUBLIC;
REVOKE ALL ON seals FROM clearing_reader, clearing_ingest, clearing_approver;
GRANT SELECT ON seals TO clearing_reader, clearing_ingest, clearing_approver;

CREATE TRIGGER postings_seal AFTER INSERT ON postings
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION clearing_seal();
CREATE TRIGGER legs_seal AFTER INSERT ON legs
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION clearing_seal();
CREATE TRIGGER notices_seal AFTER INSERT ON notices
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION clearing_seal();
CREATE TRIGGER audit_events_seal AFTER INSERT ON audit_events
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION clearing_seal();

-- Seal what is already there, per tenant, table and run. The triggers
-- above already hold their tables' locks, so no insert lands between this
-- and the migration's commit unsealed.
-- +goose StatementBegin
DO $$
DECLARE
    g record;
BEGIN
    FOR g IN
        SELECT p.tenant_id, 'postings' AS tbl, p.run_id, count(*) AS n, sum(p.amount_minor) AS amount,
               sum(clearing_seal_hash_postings(p)) % 9223372036854775808 AS h
          FROM postings p GROUP BY p.tenant_id, p.run_id
        UNION ALL
        SELECT l.tenant_id, 'legs', NULL, count(*), sum(l.amount_minor),
               sum(clearing_seal_hash_legs(l)) % 9223372036854775808
          FROM legs l GROUP BY l.tenant_id
        UNION ALL
        SELECT n.tenant_id, 'notices', n.run_id, count(*), sum(n.amount_minor),
               sum(clearing_seal_hash_notices(n)) % 9223372036854775808
          FROM notices n GROUP BY n.tenant_id, n.run_id
        UNION ALL
        SELECT e.tenant_id, 'audit_events', e.run_id, count(*), coalesce(sum(e.amount_minor), 0),
               sum(clearing_seal_hash_audit_events(e)) % 9223372036854775808
          FROM audit_events e GROUP BY e.tenant_id, e.run_id
         ORDER BY 1, 2, 3
    LOOP
        PERFORM clearing_seal_append(g.tenant_id, g.tbl, g.run_id, g.n, g.amount, g.h::bigint);
    END LOOP;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER audit_events_seal ON audit_events;
DROP TRIGGER notices_seal ON notices;
DROP TRIGGER legs_seal ON legs;
DROP TRIGGER postings_seal ON postings;
DROP FUNCTION clearing_seal();
DROP FUNCTION clearing_seal_append(text, text, bigint, bigint, numeric, bigint);
DROP TABLE seals;
DROP FUNCTION clearing_seal_link(bytea, text, text, bigint, bigint, numeric, bigint);
DROP FUNCTION clearing_seal_hash_audit_events(audit_events);
DROP FUNCTION clearing_seal_hash_notices(notices);
DROP FUNCTION clearing_seal_hash_legs(legs);
DROP FUNCTION clearing_seal_hash_postings(postings);
