-- The two functions that count approvals, in PL/pgSQL instead of SQL, with
-- the same results. A distributed planner (Citus) cannot plan a query on
-- distributed tables inside a SQL function that compares columns with the
-- function's parameters; PL/pgSQL hands it each query with the values.

-- +goose Up
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION clearing_approvals_needed(tenant text, currency text, amount_minor bigint) RETURNS integer
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
    RETURN CASE WHEN clearing_approvals_needed.amount_minor <= (
                  SELECT c.value::numeric * 10::numeric ^ e.exponent
                    FROM config c JOIN currency_exponents e ON e.currency = clearing_approvals_needed.currency
                   WHERE c.tenant_id = clearing_approvals_needed.tenant
                     AND c.key = 'corrections.four_eyes_above.' || clearing_approvals_needed.currency
                     AND c.value ~ '^[0-9]{1,18}(\.[0-9]{1,4})?$')
                THEN 1 ELSE 2 END;
END;
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION clearing_approvals_counted(tenant text, correction bigint) RETURNS integer
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
    RETURN (SELECT least(count(DISTINCT d.login), count(DISTINCT d.person))::integer
              FROM correction_decisions d
             WHERE d.tenant_id = clearing_approvals_counted.tenant AND d.correction_id = clearing_approvals_counted.correction
               AND d.decision = 'approve'
               AND d.login IS NOT NULL AND d.person IS NOT NULL AND clearing_is_approver(d.login));
END;
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION clearing_approvals_needed(tenant text, currency text, amount_minor bigint) RETURNS integer
LANGUAGE sql STABLE SET search_path = pg_catalog, public, pg_temp AS $$
    SELECT CASE WHEN amount_minor <= (
                  SELECT c.value::numeric * 10::numeric ^ e.exponent
                    FROM config c JOIN currency_exponents e ON e.currency = clearing_approvals_needed.currency
                   WHERE c.tenant_id = tenant AND c.key = 'corrections.four_eyes_above.' || clearing_approvals_needed.currency
                     AND c.value ~ '^[0-9]{1,18}(\.[0-9]{1,4})?$')
                THEN 1 ELSE 2 END
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION clearing_approvals_counted(tenant text, correction bigint) RETURNS integer
LANGUAGE sql STABLE SET search_path = pg_catalog, public, pg_temp AS $$
    SELECT least(count(DISTINCT d.login), count(DISTINCT d.person))::integer
      FROM correction_decisions d
     WHERE d.tenant_id = tenant AND d.correction_id = correction AND d.decision = 'approve'
       AND d.login IS NOT NULL AND d.person IS NOT NULL AND clearing_is_approver(d.login)
$$;
-- +goose StatementEnd
