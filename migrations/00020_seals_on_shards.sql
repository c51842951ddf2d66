-- The seal trigger on a distributed schema (Citus). There the triggers fire
-- on the shards: the table a trigger fires on is named after its table and
-- shard (postings_102008), and its rows are of the shard's row type. The
-- trigger names the table by its own name again, and hands each row to the
-- hash function as a row of the table's type, which has the same columns
-- in the same order. On one PostgreSQL both are what they were.

-- +goose Up
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION clearing_seal() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    g record;
    tbl text := CASE WHEN TG_TABLE_NAME IN ('postings', 'legs', 'notices', 'audit_events') THEN TG_TABLE_NAME
                     ELSE regexp_replace(TG_TABLE_NAME, '_[0-9]+$', '') END;
BEGIN
    IF tbl = 'postings' THEN
        FOR g IN SELECT n.tenant_id, n.run_id, count(*) AS n, sum(n.amount_minor) AS amount,
                        sum(clearing_seal_hash_postings(ROW(n.*)::postings)) % 9223372036854775808 AS h
                   FROM new_rows n GROUP BY n.tenant_id, n.run_id ORDER BY n.tenant_id, n.run_id LOOP
            PERFORM clearing_seal_append(g.tenant_id, 'postings', g.run_id, g.n, g.amount, g.h::bigint);
        END LOOP;
    ELSIF tbl = 'legs' THEN
        FOR g IN SELECT n.tenant_id, count(*) AS n, sum(n.amount_minor) AS amount,
                        sum(clearing_seal_hash_legs(ROW(n.*)::legs)) % 9223372036854775808 AS h
                   FROM new_rows n GROUP BY n.tenant_id ORDER BY n.tenant_id LOOP
            PERFORM clearing_seal_append(g.tenant_id, 'legs', NULL, g.n, g.amount, g.h::bigint);
        END LOOP;
    ELSIF tbl = 'notices' THEN
        FOR g IN SELECT n.tenant_id, n.run_id, count(*) AS n, sum(n.amount_minor) AS amount,
                        sum(clearing_seal_hash_notices(ROW(n.*)::notices)) % 9223372036854775808 AS h
                   FROM new_rows n GROUP BY n.tenant_id, n.run_id ORDER BY n.tenant_id, n.run_id LOOP
            PERFORM clearing_seal_append(g.tenant_id, 'notices', g.run_id, g.n, g.amount, g.h::bigint);
        END LOOP;
    ELSIF tbl = 'audit_events' THEN
        FOR g IN SELECT n.tenant_id, n.run_id, count(*) AS n, coalesce(sum(n.amount_minor), 0) AS amount,
                        sum(clearing_seal_hash_audit_events(ROW(n.*)::audit_events)) % 9223372036854775808 AS h
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

-- CREATE OR REPLACE resets the function's settings.
-- +goose StatementBegin
DO $$
BEGIN
    EXECUTE format('ALTER FUNCTION clearing_seal() SET search_path = %I, pg_temp', current_schema());
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION clearing_seal() RETURNS trigger
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
-- +goose StatementBegin
DO $$
BEGIN
    EXECUTE format('ALTER FUNCTION clearing_seal() SET search_path = %I, pg_temp', current_schema());
END
$$;
-- +goose StatementEnd
