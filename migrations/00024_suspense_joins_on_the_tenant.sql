-- clearing_quarantine_suspense (00019) joins the held records to their
-- corrections and decisions on the tenant column, as a distributed planner
-- (Citus) needs to route the query to one shard; the same results.

-- +goose Up
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION clearing_quarantine_suspense(tenant text, key text, reason text, suspense_account text)
RETURNS TABLE (run_id bigint, correction_id bigint, record_key text, digest bytea, outcome text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    v_run bigint;
    v_source text;
BEGIN
    PERFORM clearing_check_quarantine_decider(reason);
    SELECT min(q.source) INTO v_source FROM quarantine q
     WHERE q.tenant_id = tenant AND (q.record_key = key OR q.own_key = key);
    IF v_source IS NULL THEN
        RAISE EXCEPTION 'clearing: nothing is quarantined under % in tenant %', key, tenant USING ERRCODE = 'CA010';
    END IF;
    INSERT INTO runs (tenant_id, kind, format, source, file_name)
    VALUES (tenant, 'quarantine', 'quarantine', v_source, 'suspense ' || key)
    RETURNING runs.id INTO v_run;
    INSERT INTO corrections (tenant_id, correction_key, posting_key, class, source, reference, amount_minor, currency,
                             direction, counter_account, settlement_account, value_date, explanation, proposed_by_run,
                             quarantine_digest)
    SELECT tenant, q.record_key || ':correction:quarantined', q.record_key, 'quarantined', q.source,
           coalesce(q.reference, ''), q.amount_minor, q.currency, q.direction,
           coalesce(nullif(btrim(suspense_account), ''), 'suspense:' || q.source), 'settlement:' || q.source, q.value_date,
           format('held %s %s (%s) finds no single original; post it against suspense: %s', q.kind, q.record_key, q.verdict, btrim(reason)),
           v_run, q.digest
      FROM quarantine q
     WHERE q.tenant_id = tenant AND (q.record_key = key OR q.own_key = key)
       AND q.kind IN ('return', 'reversal') AND q.verdict IN ('orphan_return', 'ambiguous_original')
       AND NOT EXISTS (SELECT 1 FROM quarantine_decisions d
                        WHERE d.tenant_id = q.tenant_id AND d.record_key = q.record_key AND d.digest = q.digest)
     ORDER BY q.record_key, q.digest
    ON CONFLICT (tenant_id, correction_key) DO NOTHING;
    UPDATE runs r SET status = 'done', finished_at = now() WHERE r.tenant_id = tenant AND r.id = v_run;
    RETURN QUERY
    SELECT v_run, c.id, q.record_key::text, q.digest,
           CASE WHEN c.proposed_by_run = v_run THEN 'proposed'
                WHEN c.id IS NOT NULL THEN 'already_proposed'
                WHEN d.decision IS NOT NULL THEN 'already_' || d.decision
                ELSE 'not_a_return' END
      FROM quarantine q
      LEFT JOIN corrections c ON c.tenant_id = q.tenant_id AND c.correction_key = q.record_key || ':correction:quarantined'
                             AND c.quarantine_digest = q.digest
      LEFT JOIN quarantine_decisions d ON d.tenant_id = q.tenant_id AND d.record_key = q.record_key AND d.digest = q.digest
     WHERE q.tenant_id = tenant AND (q.record_key = key OR q.own_key = key)
     ORDER BY q.record_key, q.digest;
END;
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION clearing_quarantine_suspense(tenant text, key text, reason text, suspense_account text)
RETURNS TABLE (run_id bigint, correction_id bigint, record_key text, digest bytea, outcome text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    v_run bigint;
    v_source text;
BEGIN
    PERFORM clearing_check_quarantine_decider(reason);
    SELECT min(q.source) INTO v_source FROM quarantine q
     WHERE q.tenant_id = tenant AND (q.record_key = key OR q.own_key = key);
    IF v_source IS NULL THEN
        RAISE EXCEPTION 'clearing: nothing is quarantined under % in tenant %', key, tenant USING ERRCODE = 'CA010';
    END IF;
    INSERT INTO runs (tenant_id, kind, format, source, file_name)
    VALUES (tenant, 'quarantine', 'quarantine', v_source, 'suspense ' || key)
    RETURNING runs.id INTO v_run;
    INSERT INTO corrections (tenant_id, correction_key, posting_key, class, source, reference, amount_minor, currency,
                             direction, counter_account, settlement_account, value_date, explanation, proposed_by_run,
                             quarantine_digest)
    SELECT tenant, q.record_key || ':correction:quarantined', q.record_key, 'quarantined', q.source,
           coalesce(q.reference, ''), q.amount_minor, q.currency, q.direction,
           coalesce(nullif(btrim(suspense_account), ''), 'suspense:' || q.source), 'settlement:' || q.source, q.value_date,
           format('held %s %s (%s) finds no single original; post it against suspense: %s', q.kind, q.record_key, q.verdict, btrim(reason)),
           v_run, q.digest
      FROM quarantine q
     WHERE q.tenant_id = tenant AND (q.record_key = key OR q.own_key = key)
       AND q.kind IN ('return', 'reversal') AND q.verdict IN ('orphan_return', 'ambiguous_original')
       AND NOT EXISTS (SELECT 1 FROM quarantine_decisions d
                        WHERE d.tenant_id = tenant AND d.record_key = q.record_key AND d.digest = q.digest)
     ORDER BY q.record_key, q.digest
    ON CONFLICT (tenant_id, correction_key) DO NOTHING;
    UPDATE runs r SET status = 'done', finished_at = now() WHERE r.tenant_id = tenant AND r.id = v_run;
    RETURN QUERY
    SELECT v_run, c.id, q.record_key::text, q.digest,
           CASE WHEN c.proposed_by_run = v_run THEN 'proposed'
                WHEN c.id IS NOT NULL THEN 'already_proposed'
                WHEN d.decision IS NOT NULL THEN 'already_' || d.decision
                ELSE 'not_a_return' END
      FROM quarantine q
      LEFT JOIN corrections c ON c.tenant_id = tenant AND c.correction_key = q.record_key || ':correction:quarantined'
                             AND c.quarantine_digest = q.digest
      LEFT JOIN quarantine_decisions d ON d.tenant_id = tenant AND d.record_key = q.record_key AND d.digest = q.digest
     WHERE q.tenant_id = tenant AND (q.record_key = key OR q.own_key = key)
     ORDER BY q.record_key, q.digest;
END;
$$;
-- +goose StatementEnd
