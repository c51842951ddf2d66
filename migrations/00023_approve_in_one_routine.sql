-- An approval in one routine of the schema's owner: the source's ledger
-- lock, the check that the correction is still needed, and the approval
-- itself (clearing_approve). The caller then posts it, if it is the last
-- approval needed, through clearing_post_correction in the same
-- transaction. Before, the approver's own connection took the lock and ran
-- the checks; on a distributed schema (Citus) a transaction may not read,
-- as the owner, placements its approver connection has modified, or the
-- other way round, so every step after the first write is the owner's.
-- Errors: those of clearing_approve, and CA008 when the correction's break
-- is gone (a newer reconciliation of its period no longer shows it, or the
-- ledger now holds what it would post).

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION clearing_approve_correction(tenant text, correction bigint, operator text, reason text,
                                            OUT status text, OUT approvals integer, OUT needed integer)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    c corrections%ROWTYPE;
    v_newer bigint;
    v_listed boolean;
    v_holder text;
BEGIN
    PERFORM clearing_check_decider(operator, reason);
    SELECT * INTO c FROM corrections k WHERE k.tenant_id = tenant AND k.id = correction;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'clearing: no correction % in tenant %', correction, tenant USING ERRCODE = 'CA001';
    END IF;
    IF c.status NOT IN ('posted', 'rejected') THEN
        -- From here to commit no ingest of the source is between its check
        -- for settling corrections and its commit: the checks below see
        -- every original that arrived, and an ingest that starts now sees
        -- this correction posted. The correction is read again under the
        -- lock, as an approval that held it may have posted it.
        INSERT INTO ledger_locks (tenant_id, source) VALUES (tenant, c.source) ON CONFLICT DO NOTHING;
        PERFORM 1 FROM ledger_locks l WHERE l.tenant_id = tenant AND l.source = c.source FOR UPDATE;
        SELECT * INTO c FROM corrections k WHERE k.tenant_id = tenant AND k.id = correction;
    END IF;
    IF c.status NOT IN ('posted', 'rejected') AND c.class <> 'quarantined' THEN
        SELECT r.id, EXISTS (SELECT 1 FROM discrepancies d
                              WHERE d.tenant_id = tenant AND d.run_id = r.id AND d.correction_key = c.correction_key)
          INTO v_newer, v_listed
          FROM reconciliations r
         WHERE r.tenant_id = tenant AND r.source = c.source AND c.value_date BETWEEN r.period_from AND r.period_to
         ORDER BY r.id DESC LIMIT 1;
        IF v_newer IS NOT NULL AND v_newer <> c.proposed_by_run AND NOT v_listed THEN
            RAISE EXCEPTION 'clearing: reconciliation run %, newer than run % that proposed correction %, no longer shows % for reference %',
                v_newer, c.proposed_by_run, c.id, c.class, c.reference USING ERRCODE = 'CA008';
        END IF;
        IF c.class = 'amount_mismatch' THEN
            SELECT p.posting_key INTO v_holder
              FROM postings p JOIN statement_lines l ON l.tenant_id = p.tenant_id AND l.id = c.line_id
             WHERE p.tenant_id = tenant AND l.tenant_id = tenant AND p.id = c.refers_to
               AND (CASE p.direction WHEN 'C' THEN p.amount_minor ELSE -p.amount_minor END)
                   + coalesce((SELECT sum(CASE a.direction WHEN 'C' THEN a.amount_minor ELSE -a.amount_minor END)
                                 FROM postings a
                                WHERE a.tenant_id = tenant AND a.refers_to = p.id AND a.kind = 'correction'), 0)
                   = (CASE l.direction WHEN 'C' THEN l.amount_minor ELSE -l.amount_minor END);
            IF v_holder IS NOT NULL THEN
                RAISE EXCEPTION 'clearing: % and the statement now agree', v_holder USING ERRCODE = 'CA008';
            END IF;
        ELSE
            -- missing_in_ledger, unbooked_fee: has the money arrived since?
            -- By its key, or, for a correction keyed otherwise than the
            -- ledger's records (a bank's statement), by reference, amount
            -- and direction within the window in which ingest would take a
            -- record for it. A posting of the same kind of key under another
            -- key is another payment, however alike: trace numbers are
            -- reused.
            SELECT x.posting_key INTO v_holder FROM (
                SELECT p.posting_key FROM postings p WHERE p.tenant_id = tenant AND p.posting_key = c.posting_key
                UNION ALL
                SELECT p.posting_key FROM postings p
                 WHERE p.tenant_id = tenant AND p.source = c.source AND p.reference = c.reference AND p.currency = c.currency
                   AND p.kind IN ('clearing', 'correction') AND p.amount_minor = c.amount_minor AND p.direction = c.direction
                   AND abs(p.value_date - c.value_date) <= 3
                   AND split_part(p.posting_key, ':', 1) <> split_part(c.posting_key, ':', 1)) x
             LIMIT 1;
            IF v_holder IS NOT NULL THEN
                RAISE EXCEPTION 'clearing: the ledger now holds % for reference %', v_holder, c.reference USING ERRCODE = 'CA008';
            END IF;
        END IF;
    END IF;
    SELECT a.status, a.approvals, a.needed INTO status, approvals, needed
      FROM clearing_approve(tenant, correction, operator, reason) a;
END;
$$;
-- +goose StatementEnd


-- The login is read once, into a variable, by the functions that compare
-- it with a table's rows or record it: a distributed planner sends a query
-- to the shards with session_user in it, where the session is the owner's
-- connection to the worker, not the caller's login; a variable goes as a
-- value.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION clearing_approve(tenant text, correction bigint, operator text, reason text,
                                 OUT status text, OUT approvals integer, OUT needed integer)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    v_login text := session_user;
    c corrections%ROWTYPE;
    name text := clearing_person(operator);
BEGIN
    PERFORM clearing_check_decider(operator, reason);
    SELECT * INTO c FROM corrections k WHERE k.tenant_id = tenant AND k.id = correction FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'clearing: no correction % in tenant %', correction, tenant USING ERRCODE = 'CA001';
    END IF;
    approvals := clearing_approvals_counted(tenant, correction);
    IF c.status = 'posted' THEN
        status := 'posted';
        needed := approvals;
        RETURN;
    END IF;
    IF c.status = 'rejected' THEN
        RAISE EXCEPTION 'clearing: correction % (%) was rejected; rejection is final', c.id, c.correction_key USING ERRCODE = 'CA002';
    END IF;
    needed := clearing_approvals_needed(tenant, c.currency, c.amount_minor);
    -- The row lock orders the approvals of one correction, so these checks
    -- see every earlier one; the unique indexes refuse the same anyway. An
    -- approval that counted already is enough when the threshold has since
    -- risen: the caller then posts it, recording nothing more.
    IF approvals >= needed THEN
        status := 'approved';
        RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM correction_decisions d WHERE d.tenant_id = tenant AND d.correction_id = correction
                  AND d.decision = 'approve' AND d.login = v_login) THEN
        RAISE EXCEPTION 'clearing: login % already approved correction %; it needs % approvals from different logins and people',
            v_login, c.id, needed USING ERRCODE = 'CA003';
    END IF;
    IF EXISTS (SELECT 1 FROM correction_decisions d WHERE d.tenant_id = tenant AND d.correction_id = correction
                  AND d.decision = 'approve' AND d.person = name) THEN
        RAISE EXCEPTION 'clearing: % already approved correction % under another login; it needs % approvals from different logins and people',
            btrim(operator), c.id, needed USING ERRCODE = 'CA004';
    END IF;
    INSERT INTO correction_decisions (tenant_id, correction_id, decision, operator, reason, db_role, login, person)
    VALUES (tenant, correction, 'approve', operator, reason, v_login, v_login, name);
    IF c.status = 'proposed' THEN
        UPDATE corrections k SET status = 'approved' WHERE k.tenant_id = tenant AND k.id = correction;
    END IF;
    status := 'approved';
    approvals := clearing_approvals_counted(tenant, correction);
END;
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION clearing_reject(tenant text, correction bigint, operator text, reason text) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    v_login text := session_user;
    c corrections%ROWTYPE;
BEGIN
    PERFORM clearing_check_decider(operator, reason);
    SELECT * INTO c FROM corrections k WHERE k.tenant_id = tenant AND k.id = correction FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'clearing: no correction % in tenant %', correction, tenant USING ERRCODE = 'CA001';
    END IF;
    IF c.status = 'posted' THEN
        RAISE EXCEPTION 'clearing: correction % posted under %; reverse it with a new correction', c.id, c.posting_key
            USING ERRCODE = 'CA007';
    END IF;
    IF c.status = 'rejected' THEN
        RETURN 'rejected';
    END IF;
    INSERT INTO correction_decisions (tenant_id, correction_id, decision, operator, reason, db_role, login, person)
    VALUES (tenant, correction, 'reject', operator, reason, v_login, v_login, clearing_person(operator))
    ON CONFLICT DO NOTHING;
    UPDATE corrections k SET status = 'rejected' WHERE k.tenant_id = tenant AND k.id = correction;
    RETURN 'rejected';
END;
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION clearing_own_run(p_tenant text, p_run bigint) RETURNS void
LANGUAGE plpgsql STABLE AS $$
DECLARE
    v_login text := session_user;
BEGIN
    IF NOT EXISTS (
        SELECT 1 FROM runs r
         WHERE r.tenant_id = p_tenant AND r.id = p_run AND r.status = 'running'
           AND (r.login = v_login
                OR pg_has_role(v_login, (SELECT c.relowner FROM pg_class c WHERE c.oid = 'postings'::regclass), 'USAGE'))) THEN
        RAISE EXCEPTION 'clearing: run % of tenant % is not a running run of login %', p_run, p_tenant, v_login
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'a run is continued by the login that started it';
    END IF;
END;
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION clearing_ack_break(p_tenant text, p_break bigint, p_reason text) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    v_login text := session_user;
    b breaks%ROWTYPE;
BEGIN
    IF NOT pg_has_role(v_login, 'clearing_approver', 'USAGE')
       AND NOT pg_has_role(v_login, (SELECT c.relowner FROM pg_class c WHERE c.oid = 'breaks'::regclass), 'USAGE') THEN
        RAISE EXCEPTION 'clearing: login % may not acknowledge breaks: only a login in clearing_approver may', v_login
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF p_reason IS NULL OR length(btrim(p_reason)) = 0 THEN
        RAISE EXCEPTION 'clearing: an acknowledgement needs a reason' USING ERRCODE = 'check_violation';
    END IF;
    SELECT * INTO b FROM breaks k WHERE k.tenant_id = p_tenant AND k.id = p_break FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'clearing: no break % in tenant %', p_break, p_tenant USING ERRCODE = 'CA011';
    END IF;
    IF b.status = 'closed' THEN
        RAISE EXCEPTION 'clearing: break % (% %) was closed by run %; there is nothing to acknowledge', b.id, b.class, b.item_key, b.closed_run
            USING ERRCODE = 'CA012';
    END IF;
    INSERT INTO break_acks (tenant_id, break_id, login, reason, amount, run_id)
    VALUES (p_tenant, p_break, v_login, btrim(p_reason), b.amount, b.last_run);
    UPDATE breaks k SET status = 'acknowledged', acked_amount = b.amount WHERE k.tenant_id = p_tenant AND k.id = p_break;
    RETURN 'acknowledged';
END;
$$;
-- +goose StatementEnd

REVOKE ALL ON FUNCTION clearing_approve_correction(text, bigint, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION clearing_approve_correction(text, bigint, text, text) TO clearing_approver;

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION clearing_approve(tenant text, correction bigint, operator text, reason text,
                                 OUT status text, OUT approvals integer, OUT needed integer)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    c corrections%ROWTYPE;
    name text := clearing_person(operator);
BEGIN
    PERFORM clearing_check_decider(operator, reason);
    SELECT * INTO c FROM corrections k WHERE k.tenant_id = tenant AND k.id = correction FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'clearing: no correction % in tenant %', correction, tenant USING ERRCODE = 'CA001';
    END IF;
    approvals := clearing_approvals_counted(tenant, correction);
    IF c.status = 'posted' THEN
        status := 'posted';
        needed := approvals;
        RETURN;
    END IF;
    IF c.status = 'rejected' THEN
        RAISE EXCEPTION 'clearing: correction % (%) was rejected; rejection is final', c.id, c.correction_key USING ERRCODE = 'CA002';
    END IF;
    needed := clearing_approvals_needed(tenant, c.currency, c.amount_minor);
    -- The row lock orders the approvals of one correction, so these checks
    -- see every earlier one; the unique indexes refuse the same anyway. An
    -- approval that counted already is enough when the threshold has since
    -- risen: the caller then posts it, recording nothing more.
    IF approvals >= needed THEN
        status := 'approved';
        RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM correction_decisions d WHERE d.tenant_id = tenant AND d.correction_id = correction
                  AND d.decision = 'approve' AND d.login = session_user) THEN
        RAISE EXCEPTION 'clearing: login % already approved correction %; it needs % approvals from different logins and people',
            session_user, c.id, needed USING ERRCODE = 'CA003';
    END IF;
    IF EXISTS (SELECT 1 FROM correction_decisions d WHERE d.tenant_id = tenant AND d.correction_id = correction
                  AND d.decision = 'approve' AND d.person = name) THEN
        RAISE EXCEPTION 'clearing: % already approved correction % under another login; it needs % approvals from different logins and people',
            btrim(operator), c.id, needed USING ERRCODE = 'CA004';
    END IF;
    INSERT INTO correction_decisions (tenant_id, correction_id, decision, operator, reason, db_role, login, person)
    VALUES (tenant, correction, 'approve', operator, reason, session_user, session_user, name);
    IF c.status = 'proposed' THEN
        UPDATE corrections k SET status = 'approved' WHERE k.tenant_id = tenant AND k.id = correction;
    END IF;
    status := 'approved';
    approvals := clearing_approvals_counted(tenant, correction);
END;
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION clearing_reject(tenant text, correction bigint, operator text, reason text) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    c corrections%ROWTYPE;
BEGIN
    PERFORM clearing_check_decider(operator, reason);
    SELECT * INTO c FROM corrections k WHERE k.tenant_id = tenant AND k.id = correction FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'clearing: no correction % in tenant %', correction, tenant USING ERRCODE = 'CA001';
    END IF;
    IF c.status = 'posted' THEN
        RAISE EXCEPTION 'clearing: correction % posted under %; reverse it with a new correction', c.id, c.posting_key
            USING ERRCODE = 'CA007';
    END IF;
    IF c.status = 'rejected' THEN
        RETURN 'rejected';
    END IF;
    INSERT INTO correction_decisions (tenant_id, correction_id, decision, operator, reason, db_role, login, person)
    VALUES (tenant, correction, 'reject', operator, reason, session_user, session_user, clearing_person(operator))
    ON CONFLICT DO NOTHING;
    UPDATE corrections k SET status = 'rejected' WHERE k.tenant_id = tenant AND k.id = correction;
    RETURN 'rejected';
END;
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION clearing_own_run(p_tenant text, p_run bigint) RETURNS void
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF NOT EXISTS (
        SELECT 1 FROM runs r
         WHERE r.tenant_id = p_tenant AND r.id = p_run AND r.status = 'running'
           AND (r.login = session_user
                OR pg_has_role(session_user, (SELECT c.relowner FROM pg_class c WHERE c.oid = 'postings'::regclass), 'USAGE'))) THEN
        RAISE EXCEPTION 'clearing: run % of tenant % is not a running run of login %', p_run, p_tenant, session_user
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'a run is continued by the login that started it';
    END IF;
END;
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION clearing_ack_break(p_tenant text, p_break bigint, p_reason text) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    b breaks%ROWTYPE;
BEGIN
    IF NOT pg_has_role(session_user, 'clearing_approver', 'USAGE')
       AND NOT pg_has_role(session_user, (SELECT c.relowner FROM pg_class c WHERE c.oid = 'breaks'::regclass), 'USAGE') THEN
        RAISE EXCEPTION 'clearing: login % may not acknowledge breaks: only a login in clearing_approver may', session_user
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF p_reason IS NULL OR length(btrim(p_reason)) = 0 THEN
        RAISE EXCEPTION 'clearing: an acknowledgement needs a reason' USING ERRCODE = 'check_violation';
    END IF;
    SELECT * INTO b FROM breaks k WHERE k.tenant_id = p_tenant AND k.id = p_break FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'clearing: no break % in tenant %', p_break, p_tenant USING ERRCODE = 'CA011';
    END IF;
    IF b.status = 'closed' THEN
        RAISE EXCEPTION 'clearing: break % (% %) was closed by run %; there is nothing to acknowledge', b.id, b.class, b.item_key, b.closed_run
            USING ERRCODE = 'CA012';
    END IF;
    INSERT INTO break_acks (tenant_id, break_id, login, reason, amount, run_id)
    VALUES (p_tenant, p_break, session_user, btrim(p_reason), b.amount, b.last_run);
    UPDATE breaks k SET status = 'acknowledged', acked_amount = b.amount WHERE k.tenant_id = p_tenant AND k.id = p_break;
    RETURN 'acknowledged';
END;
$$;
-- +goose StatementEnd
DROP FUNCTION clearing_approve_correction(text, bigint, text, text);
