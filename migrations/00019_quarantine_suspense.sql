-- A quarantined return or reversal whose original never arrives (or
-- resolves to more than one) can be posted against a suspense account
-- through the corrections path: an operator proposes it
-- (clearing_quarantine_suspense), approvers approve it with four eyes like
-- any correction, and the final approval posts it under the held record's
-- own key and closes the held record as posted_to_suspense, in one
-- transaction (docs/decisions/quarantine-inventory.md). A later arrival of
-- the same record is settled by that posting and does not post again.

-- +goose Up
ALTER TABLE corrections DROP CONSTRAINT corrections_class_check;
ALTER TABLE corrections ADD CONSTRAINT corrections_class_check
    CHECK (class IN ('missing_in_ledger', 'amount_mismatch', 'unbooked_fee', 'quarantined'));
-- The held record a quarantined correction posts: its key is the
-- correction's posting_key, its digest this.
ALTER TABLE corrections ADD COLUMN quarantine_digest bytea;

ALTER TABLE quarantine_decisions DROP CONSTRAINT quarantine_decisions_decision_check;
ALTER TABLE quarantine_decisions ADD CONSTRAINT quarantine_decisions_decision_check
    CHECK (decision IN ('released', 'dismissed', 'posted_to_suspense'));
ALTER TABLE quarantine_decisions ADD CONSTRAINT quarantine_decisions_suspense_posted
    CHECK (decision <> 'posted_to_suspense' OR posting_id IS NOT NULL);

-- clearing_check_proposal checks a quarantined correction against the held
-- record it posts (open, a return or reversal that found no single
-- original, the same money and date, under the record's own key), and
-- every other correction as before (00007).
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION clearing_check_proposal() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    l statement_lines%ROWTYPE;
    p postings%ROWTYPE;
    delta bigint;
    want_key text;
    want_posting_key text;
    held quarantine%ROWTYPE;
BEGIN
    IF NEW.class = 'quarantined' THEN
        SELECT * INTO held FROM quarantine h
         WHERE h.tenant_id = NEW.tenant_id AND h.record_key = NEW.posting_key AND h.digest = NEW.quarantine_digest;
        IF NOT FOUND OR held.kind NOT IN ('return', 'reversal') OR held.verdict NOT IN ('orphan_return', 'ambiguous_original')
           OR EXISTS (SELECT 1 FROM quarantine_decisions d
                       WHERE d.tenant_id = NEW.tenant_id AND d.record_key = held.record_key AND d.digest = held.digest) THEN
            RAISE EXCEPTION 'clearing: correction % names no open held return or reversal', NEW.correction_key
                USING ERRCODE = 'check_violation';
        END IF;
        IF NEW.status <> 'proposed' OR NEW.posting_id IS NOT NULL OR NEW.refers_to IS NOT NULL OR NEW.line_id IS NOT NULL
           OR NEW.source <> held.source OR NEW.amount_minor <> held.amount_minor OR NEW.currency <> held.currency
           OR NEW.direction <> held.direction OR NEW.value_date <> held.value_date
           OR NEW.correction_key <> held.record_key || ':correction:quarantined'
           OR NEW.settlement_account <> 'settlement:' || held.source THEN
            RAISE EXCEPTION 'clearing: correction % does not match held record % (amount %, currency %, direction %, date %)',
                NEW.correction_key, held.record_key, NEW.amount_minor, NEW.currency, NEW.direction, NEW.value_date
                USING ERRCODE = 'check_violation';
        END IF;
        RETURN NEW;
    END IF;
    IF NEW.quarantine_digest IS NOT NULL THEN
        RAISE EXCEPTION 'clearing: correction % of class % posts no held record', NEW.correction_key, NEW.class
            USING ERRCODE = 'check_violation';
    END IF;
    IF NEW.status <> 'proposed' OR NEW.posting_id IS NOT NULL THEN
        RAISE EXCEPTION 'clearing: a correction is proposed unposted; % with posting % is not a proposal', NEW.status, NEW.posting_id
            USING ERRCODE = 'check_violation';
    END IF;
    SELECT * INTO l FROM statement_lines s WHERE s.tenant_id = NEW.tenant_id AND s.id = NEW.line_id;
    IF NOT FOUND OR l.source <> NEW.source THEN
        RAISE EXCEPTION 'clearing: correction % names no statement line of source %', NEW.correction_key, NEW.source
            USING ERRCODE = 'check_violation';
    END IF;
    delta := CASE l.direction WHEN 'C' THEN l.amount_minor ELSE -l.amount_minor END;
    IF NEW.class = 'amount_mismatch' THEN
        SELECT * INTO p FROM postings q WHERE q.tenant_id = NEW.tenant_id AND q.id = NEW.refers_to;
        IF NOT FOUND OR p.source <> NEW.source OR p.currency <> l.currency THEN
            RAISE EXCEPTION 'clearing: correction % names no posting of source % in %', NEW.correction_key, NEW.source, l.currency
                USING ERRCODE = 'check_violation';
        END IF;
        delta := delta - (CASE p.direction WHEN 'C' THEN p.amount_minor ELSE -p.amount_minor END)
               - coalesce((SELECT sum(CASE a.direction WHEN 'C' THEN a.amount_minor ELSE -a.amount_minor END)
                             FROM postings a
                            WHERE a.tenant_id = NEW.tenant_id AND a.refers_to = p.id AND a.kind = 'correction'), 0);
        want_key := p.posting_key || ':correction:amount_mismatch';
        want_posting_key := want_key;
    ELSE
        IF NEW.refers_to IS NOT NULL THEN
            RAISE EXCEPTION 'clearing: correction % of class % adjusts no posting', NEW.correction_key, NEW.class
                USING ERRCODE = 'check_violation';
        END IF;
        want_key := l.line_key || ':correction:' || NEW.class;
        want_posting_key := CASE NEW.class WHEN 'missing_in_ledger' THEN l.line_key ELSE want_key END;
    END IF;
    IF delta = 0 OR NEW.amount_minor <> abs(delta) OR NEW.direction <> (CASE WHEN delta > 0 THEN 'C' ELSE 'D' END)
       OR NEW.currency <> l.currency OR NEW.value_date <> l.value_date
       OR NEW.correction_key <> want_key OR NEW.posting_key <> want_posting_key
       OR NEW.settlement_account <> 'settlement:' || NEW.source THEN
        RAISE EXCEPTION 'clearing: correction % does not match statement line % (amount %, currency %, direction %, date %)',
            NEW.correction_key, l.line_key, NEW.amount_minor, NEW.currency, NEW.direction, NEW.value_date
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END;
$$;
-- +goose StatementEnd

-- clearing_post_correction posts a quarantined correction's held record,
-- once, and closes it as posted_to_suspense in the same transaction.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION clearing_post_correction(tenant text, correction bigint) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    c corrections%ROWTYPE;
    have integer;
    need integer;
    posting bigint;
BEGIN
    IF NOT clearing_is_approver(session_user) THEN
        RAISE EXCEPTION 'clearing: login % may not post corrections: only a login in clearing_approver that is not the owner may', session_user
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    SELECT * INTO c FROM corrections k WHERE k.tenant_id = tenant AND k.id = correction FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'clearing: no correction % in tenant %', correction, tenant USING ERRCODE = 'CA001';
    END IF;
    IF c.status = 'posted' THEN
        RETURN c.posting_id;
    END IF;
    IF c.status = 'rejected' THEN
        RAISE EXCEPTION 'clearing: correction % (%) was rejected; rejection is final', c.id, c.correction_key USING ERRCODE = 'CA002';
    END IF;
    have := clearing_approvals_counted(tenant, correction);
    need := clearing_approvals_needed(tenant, c.currency, c.amount_minor);
    IF have < need THEN
        RAISE EXCEPTION 'clearing: correction % has % of the % approvals by different logins and people it needs', c.id, have, need
            USING ERRCODE = 'CA005';
    END IF;
    -- A held record posts once: not when it was released or dismissed
    -- since it was proposed.
    IF c.class = 'quarantined' AND EXISTS (SELECT 1 FROM quarantine_decisions d
                                            WHERE d.tenant_id = tenant AND d.record_key = c.posting_key
                                              AND d.digest = c.quarantine_digest) THEN
        RAISE EXCEPTION 'clearing: the held record % was resolved since correction % was proposed, so it posts nothing', c.posting_key, c.id
            USING ERRCODE = 'CA006';
    END IF;
    INSERT INTO postings (tenant_id, posting_key, kind, source, reference, value_date, amount_minor, currency,
                          direction, account, digest, refers_to, detail)
    VALUES (tenant, c.posting_key, 'correction', c.source, c.reference, c.value_date, c.amount_minor, c.currency,
            c.direction, c.counter_account,
            sha256(convert_to(concat_ws(E'\x1f', 'v1', 'correction', c.posting_key, c.amount_minor::text, c.currency::text,
                                        c.direction::text, '', to_char(c.value_date, 'YYYY-MM-DD')) || E'\x1f', 'UTF8')),
            c.refers_to, 'correction of ' || c.class)
    ON CONFLICT (tenant_id, posting_key) DO NOTHING
    RETURNING id INTO posting;
    IF posting IS NULL THEN
        RAISE EXCEPTION 'clearing: the ledger already holds %, so the money correction % would post has arrived', c.posting_key, c.id
            USING ERRCODE = 'CA006';
    END IF;
    INSERT INTO legs (tenant_id, posting_id, leg_no, account, direction, amount_minor, currency, value_date)
    VALUES (tenant, posting, 1, c.counter_account, c.direction, c.amount_minor, c.currency, c.value_date),
           (tenant, posting, 2, c.settlement_account, CASE c.direction WHEN 'C' THEN 'D' ELSE 'C' END,
            c.amount_minor, c.currency, c.value_date);
    UPDATE corrections k SET status = 'posted', posting_id = posting WHERE k.tenant_id = tenant AND k.id = correction;
    IF c.class = 'quarantined' THEN
        INSERT INTO quarantine_decisions (tenant_id, record_key, digest, decision, run_id, posting_id, reason)
        VALUES (tenant, c.posting_key, c.quarantine_digest, 'posted_to_suspense', c.proposed_by_run, posting,
                'posted against ' || c.counter_account || ' by correction ' || c.id);
    END IF;
    RETURN posting;
END;
$$;
-- +goose StatementEnd

-- clearing_quarantine_suspense proposes, for each open held return or
-- reversal of tenant under key (its key or own key) that found no single
-- original, a correction that posts it against suspense_account (suspense:<source>
-- when empty), with the calling login's reason; approvers then decide on
-- it as on any correction. It starts a run of kind quarantine, which
-- proposes them, and says for each held record of the key: proposed, or
-- already_proposed (with that correction), or why it cannot be (not_held
-- for one already resolved, not_a_return for a record of another kind,
-- which an operator releases or dismisses).
-- +goose StatementBegin
CREATE FUNCTION clearing_quarantine_suspense(tenant text, key text, reason text, suspense_account text)
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

REVOKE ALL ON FUNCTION clearing_quarantine_suspense(text, text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION clearing_quarantine_suspense(text, text, text, text) TO clearing_approver;

-- +goose Down
DROP FUNCTION clearing_quarantine_suspense(text, text, text, text);
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION clearing_post_correction(tenant text, correction bigint) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    c corrections%ROWTYPE;
    have integer;
    need integer;
    posting bigint;
BEGIN
    IF NOT clearing_is_approver(session_user) THEN
        RAISE EXCEPTION 'clearing: login % may not post corrections: only a login in clearing_approver that is not the owner may', session_user
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    SELECT * INTO c FROM corrections k WHERE k.tenant_id = tenant AND k.id = correction FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'clearing: no correction % in tenant %', correction, tenant USING ERRCODE = 'CA001';
    END IF;
    IF c.status = 'posted' THEN
        RETURN c.posting_id;
    END IF;
    IF c.status = 'rejected' THEN
        RAISE EXCEPTION 'clearing: correction % (%) was rejected; rejection is final', c.id, c.correction_key USING ERRCODE = 'CA002';
    END IF;
    have := clearing_approvals_counted(tenant, correction);
    need := clearing_approvals_needed(tenant, c.currency, c.amount_minor);
    IF have < need THEN
        RAISE EXCEPTION 'clearing: correction % has % of the % approvals by different logins and people it needs', c.id, have, need
            USING ERRCODE = 'CA005';
    END IF;
    INSERT INTO postings (tenant_id, posting_key, kind, source, reference, value_date, amount_minor, currency,
                          direction, account, digest, refers_to, detail)
    VALUES (tenant, c.posting_key, 'correction', c.source, c.reference, c.value_date, c.amount_minor, c.currency,
            c.direction, c.counter_account,
            sha256(convert_to(concat_ws(E'\x1f', 'v1', 'correction', c.posting_key, c.amount_minor::text, c.currency::text,
                                        c.direction::text, '', to_char(c.value_date, 'YYYY-MM-DD')) || E'\x1f', 'UTF8')),
            c.refers_to, 'correction of ' || c.class)
    ON CONFLICT (tenant_id, posting_key) DO NOTHING
    RETURNING id INTO posting;
    IF posting IS NULL THEN
        RAISE EXCEPTION 'clearing: the ledger already holds %, so the money correction % would post has arrived', c.posting_key, c.id
            USING ERRCODE = 'CA006';
    END IF;
    INSERT INTO legs (tenant_id, posting_id, leg_no, account, direction, amount_minor, currency, value_date)
    VALUES (tenant, posting, 1, c.counter_account, c.direction, c.amount_minor, c.currency, c.value_date),
           (tenant, posting, 2, c.settlement_account, CASE c.direction WHEN 'C' THEN 'D' ELSE 'C' END,
            c.amount_minor, c.currency, c.value_date);
    UPDATE corrections k SET status = 'posted', posting_id = posting WHERE k.tenant_id = tenant AND k.id = correction;
    RETURN posting;
END;
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION clearing_check_proposal() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    l statement_lines%ROWTYPE;
    p postings%ROWTYPE;
    delta bigint;
    want_key text;
    want_posting_key text;
BEGIN
    IF NEW.status <> 'proposed' OR NEW.posting_id IS NOT NULL THEN
        RAISE EXCEPTION 'clearing: a correction is proposed unposted; % with posting % is not a proposal', NEW.status, NEW.posting_id
            USING ERRCODE = 'check_violation';
    END IF;
    SELECT * INTO l FROM statement_lines s WHERE s.tenant_id = NEW.tenant_id AND s.id = NEW.line_id;
    IF NOT FOUND OR l.source <> NEW.source THEN
        RAISE EXCEPTION 'clearing: correction % names no statement line of source %', NEW.correction_key, NEW.source
            USING ERRCODE = 'check_violation';
    END IF;
    delta := CASE l.direction WHEN 'C' THEN l.amount_minor ELSE -l.amount_minor END;
    IF NEW.class = 'amount_mismatch' THEN
        SELECT * INTO p FROM postings q WHERE q.tenant_id = NEW.tenant_id AND q.id = NEW.refers_to;
        IF NOT FOUND OR p.source <> NEW.source OR p.currency <> l.currency THEN
            RAISE EXCEPTION 'clearing: correction % names no posting of source % in %', NEW.correction_key, NEW.source, l.currency
                USING ERRCODE = 'check_violation';
        END IF;
        delta := delta - (CASE p.direction WHEN 'C' THEN p.amount_minor ELSE -p.amount_minor END)
               - coalesce((SELECT sum(CASE a.direction WHEN 'C' THEN a.amount_minor ELSE -a.amount_minor END)
                             FROM postings a
                            WHERE a.tenant_id = NEW.tenant_id AND a.refers_to = p.id AND a.kind = 'correction'), 0);
        want_key := p.posting_key || ':correction:amount_mismatch';
        want_posting_key := want_key;
    ELSE
        IF NEW.refers_to IS NOT NULL THEN
            RAISE EXCEPTION 'clearing: correction % of class % adjusts no posting', NEW.correction_key, NEW.class
                USING ERRCODE = 'check_violation';
        END IF;
        want_key := l.line_key || ':correction:' || NEW.class;
        want_posting_key := CASE NEW.class WHEN 'missing_in_ledger' THEN l.line_key ELSE want_key END;
    END IF;
    IF delta = 0 OR NEW.amount_minor <> abs(delta) OR NEW.direction <> (CASE WHEN delta > 0 THEN 'C' ELSE 'D' END)
       OR NEW.currency <> l.currency OR NEW.value_date <> l.value_date
       OR NEW.correction_key <> want_key OR NEW.posting_key <> want_posting_key
       OR NEW.settlement_account <> 'settlement:' || NEW.source THEN
        RAISE EXCEPTION 'clearing: correction % does not match statement line % (amount %, currency %, direction %, date %)',
            NEW.correction_key, l.line_key, NEW.amount_minor, NEW.currency, NEW.direction, NEW.value_date
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END;
$$;
-- +goose StatementEnd
-- Decisions are append-only: the ones this migration allowed stay, and
-- the old check applies to new rows only.
ALTER TABLE quarantine_decisions DROP CONSTRAINT quarantine_decisions_suspense_posted;
ALTER TABLE quarantine_decisions DROP CONSTRAINT quarantine_decisions_decision_check;
ALTER TABLE quarantine_decisions ADD CONSTRAINT quarantine_decisions_decision_check
    CHECK (decision IN ('released', 'dismissed')) NOT VALID;
ALTER TABLE corrections DROP COLUMN quarantine_digest;
ALTER TABLE corrections DROP CONSTRAINT corrections_class_check;
ALTER TABLE corrections ADD CONSTRAINT corrections_class_check
    CHECK (class IN ('missing_in_ledger', 'amount_mismatch', 'unbooked_fee')) NOT VALID;
