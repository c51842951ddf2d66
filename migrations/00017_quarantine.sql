-- Quarantine as an inventory (docs/decisions/quarantine-inventory.md). A
-- record the ledger cannot post (an orphan return, an in-file duplicate, a
-- held file...) is held once, under its key and content digest, by the run
-- that first met it; it stays open until it is released (its original
-- arrived and it posted) or dismissed by an operator, and each of those is
-- a final, append-only decision. A later ingest that meets the same record
-- again audits it as already_quarantined (needing a person while it is
-- open) or quarantine_dismissed (not), instead of holding it anew.
--
-- The ledger writes both tables through its routines (SECURITY DEFINER,
-- installed by 'clearing migrate' from internal/ledger); operators decide
-- through clearing_quarantine_dismiss and clearing_quarantine_release
-- below, which record the login (session_user). No clearing_* role writes
-- either table itself.

-- +goose Up
ALTER TABLE audit_events DROP CONSTRAINT audit_events_verdict_check;
ALTER TABLE audit_events ADD CONSTRAINT audit_events_verdict_check CHECK (verdict IN (
    'duplicate', 'conflict', 'in_file_duplicate', 'orphan_return', 'ambiguous_original', 'link_mismatch',
    'exceeds_original', 'settled_by_correction', 'held_by_conflict', 'possible_resend', 'ambiguous_settlement',
    'already_quarantined', 'quarantine_dismissed'));

ALTER TABLE runs DROP CONSTRAINT runs_kind_check;
ALTER TABLE runs ADD CONSTRAINT runs_kind_check CHECK (kind IN ('ingest', 'statement', 'reconcile', 'quarantine'));
ALTER TABLE runs ADD COLUMN already_quarantined bigint NOT NULL DEFAULT 0,
                 ADD COLUMN dismissed bigint NOT NULL DEFAULT 0,
                 ADD COLUMN released bigint NOT NULL DEFAULT 0;

-- One row per held record: its key and digest are its identity, and it
-- keeps what posting it later needs (the staged record's content and link),
-- so that a release posts exactly what arrived.
CREATE TABLE quarantine (
    tenant_id          text    NOT NULL,
    record_key         text    COLLATE "C" NOT NULL,
    digest             bytea   NOT NULL,
    verdict            text    NOT NULL,
    kind               text    NOT NULL,
    source             text    NOT NULL,
    own_key            text    COLLATE "C" NOT NULL,
    first_run_id       bigint  NOT NULL,
    first_event_id     bigint  NOT NULL,
    record_no          bigint  NOT NULL,
    line               bigint  NOT NULL,
    reference          text    COLLATE "C",
    alt_reference      text    COLLATE "C",
    amount_minor       bigint  NOT NULL,
    currency           char(3) NOT NULL,
    direction          char(1) NOT NULL,
    account            text    COLLATE "C" NOT NULL DEFAULT '',
    account_last4      text    NOT NULL DEFAULT '',
    value_date         date    NOT NULL,
    detail             text    NOT NULL DEFAULT '',
    link_reference     text    COLLATE "C",
    link_by_alt        boolean NOT NULL DEFAULT false,
    link_prefix        text    COLLATE "C",
    link_suffix        text,
    link_parent_suffix text,
    link_depth         integer NOT NULL DEFAULT 0,
    link_fallback      text    COLLATE "C",
    link_fallback_prefix text  COLLATE "C",
    settle_amount      bigint,
    settle_currency    text,
    settle_group       text    COLLATE "C",
    created_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, record_key, digest)
);
CREATE INDEX quarantine_link ON quarantine (tenant_id, link_reference) WHERE link_reference IS NOT NULL;
CREATE INDEX quarantine_own_key ON quarantine (tenant_id, own_key);

-- At most one decision per held record, and it is final: released (with
-- the run that posted it and the posting) or dismissed (with a reason).
-- login is the database's session_user, never a name the client typed.
CREATE TABLE quarantine_decisions (
    tenant_id   text    NOT NULL,
    record_key  text    COLLATE "C" NOT NULL,
    digest      bytea   NOT NULL,
    decision    text    NOT NULL CHECK (decision IN ('released', 'dismissed')),
    run_id      bigint,
    posting_id  bigint,
    login       text    NOT NULL DEFAULT session_user,
    reason      text    NOT NULL CHECK (length(reason) BETWEEN 1 AND 2000),
    decided_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, record_key, digest),
    CHECK (decision <> 'released' OR posting_id IS NOT NULL)
);

CREATE TRIGGER quarantine_append_only BEFORE UPDATE OR DELETE ON quarantine
    FOR EACH ROW EXECUTE FUNCTION clearing_reject_change();
CREATE TRIGGER quarantine_no_truncate BEFORE TRUNCATE ON quarantine
    FOR EACH STATEMENT EXECUTE FUNCTION clearing_reject_change();
CREATE TRIGGER quarantine_decisions_append_only BEFORE UPDATE OR DELETE ON quarantine_decisions
    FOR EACH ROW EXECUTE FUNCTION clearing_reject_change();
CREATE TRIGGER quarantine_decisions_no_truncate BEFORE TRUNCATE ON quarantine_decisions
    FOR EACH STATEMENT EXECUTE FUNCTION clearing_reject_change();

-- Every role reads (default privileges of 00003 grant SELECT); none writes.
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON quarantine, quarantine_decisions FROM PUBLIC;

-- clearing_check_quarantine_decider refuses a caller who may not resolve
-- quarantined records (the same logins that decide on corrections: members
-- of clearing_approver that are not the schema's owner), and an empty or
-- over-long reason.
-- +goose StatementBegin
CREATE FUNCTION clearing_check_quarantine_decider(reason text) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
    IF clearing_is_owner(session_user) THEN
        RAISE EXCEPTION 'clearing: login % can act as the owner of the schema, which never resolves quarantined records; use a login in clearing_approver', session_user
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF NOT clearing_is_approver(session_user) THEN
        RAISE EXCEPTION 'clearing: login % may not resolve quarantined records: it is not a member of clearing_approver, or it can create roles', session_user
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF btrim(coalesce(reason, '')) = '' OR length(reason) > 2000 THEN
        RAISE EXCEPTION 'clearing: resolving a quarantined record needs a reason (at most 2000 characters)'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END;
$$;
-- +goose StatementEnd

-- clearing_quarantine_dismiss dismisses every open quarantine of tenant
-- whose key (or own key) is key, with the calling login and reason, and
-- says for each held record of that key what became of it: dismissed, or
-- the decision it already had.
-- +goose StatementBegin
CREATE FUNCTION clearing_quarantine_dismiss(tenant text, key text, reason text)
RETURNS TABLE (record_key text, digest bytea, outcome text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
    PERFORM clearing_check_quarantine_decider(reason);
    RETURN QUERY
    WITH q AS (
        SELECT q.record_key, q.digest FROM quarantine q
         WHERE q.tenant_id = tenant AND (q.record_key = key OR q.own_key = key)
         ORDER BY q.record_key, q.digest
           FOR UPDATE
    ), ins AS (
        INSERT INTO quarantine_decisions (tenant_id, record_key, digest, decision, reason)
        SELECT tenant, q.record_key, q.digest, 'dismissed', btrim(reason) FROM q
        ON CONFLICT DO NOTHING
        RETURNING quarantine_decisions.record_key, quarantine_decisions.digest
    )
    SELECT q.record_key::text, q.digest,
           CASE WHEN i.record_key IS NOT NULL THEN 'dismissed' ELSE 'already_' || d.decision END
      FROM q
      LEFT JOIN ins i ON i.record_key = q.record_key AND i.digest = q.digest
      LEFT JOIN quarantine_decisions d ON d.tenant_id = tenant AND d.record_key = q.record_key AND d.digest = q.digest;
END;
$$;
-- +goose StatementEnd

-- clearing_quarantine_release is an operator's word that the original of
-- the held records of key is now in the ledger: it starts a run of kind
-- quarantine for the calling login and tries to post them through the
-- ledger's own routine (clearing_release_keys, which 'clearing migrate'
-- installs), which posts only what now resolves to exactly one original,
-- under the derived key and the ledger's unique index, and records the
-- release. It returns the run and, for each held record of the key,
-- released, still_held (the original is still not there) or the decision
-- it already had.
-- +goose StatementBegin
CREATE FUNCTION clearing_quarantine_release(tenant text, key text, reason text)
RETURNS TABLE (run_id bigint, record_key text, digest bytea, outcome text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    v_run bigint;
    v_posted bigint := 0;
    v_n bigint;
    v_source text;
BEGIN
    PERFORM clearing_check_quarantine_decider(reason);
    SELECT min(q.source) INTO v_source FROM quarantine q
     WHERE q.tenant_id = tenant AND (q.record_key = key OR q.own_key = key);
    IF v_source IS NULL THEN
        RAISE EXCEPTION 'clearing: nothing is quarantined under % in tenant %', key, tenant USING ERRCODE = 'CA010';
    END IF;
    INSERT INTO runs (tenant_id, kind, format, source, file_name)
    VALUES (tenant, 'quarantine', 'quarantine', v_source, 'release ' || key)
    RETURNING runs.id INTO v_run;
    FOR depth IN 1..4 LOOP
        SELECT r.n INTO v_n FROM clearing_release_keys(tenant, v_run, ARRAY[key], depth, btrim(reason)) r(n);
        v_posted := v_posted + coalesce(v_n, 0);
    END LOOP;
    UPDATE runs r SET status = 'done', finished_at = now(), released = v_posted
     WHERE r.tenant_id = tenant AND r.id = v_run;
    RETURN QUERY
    SELECT v_run, q.record_key::text, q.digest,
           CASE WHEN d.decision IS NULL THEN 'still_held'
                WHEN d.run_id = v_run THEN d.decision
                ELSE 'already_' || d.decision END
      FROM quarantine q
      LEFT JOIN quarantine_decisions d ON d.tenant_id = tenant AND d.record_key = q.record_key AND d.digest = q.digest
     WHERE q.tenant_id = tenant AND (q.record_key = key OR q.own_key = key)
     ORDER BY q.record_key, q.digest;
END;
$$;
-- +goose StatementEnd

REVOKE ALL ON FUNCTION clearing_quarantine_dismiss(text, text, text), clearing_quarantine_release(text, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION clearing_quarantine_dismiss(text, text, text), clearing_quarantine_release(text, text, text)
    TO clearing_approver;

-- +goose Down
DROP FUNCTION clearing_quarantine_release(text, text, text);
DROP FUNCTION clearing_quarantine_dismiss(text, text, text);
DROP FUNCTION clearing_check_quarantine_decider(text);
DROP TABLE quarantine_decisions;
DROP TABLE quarantine;
ALTER TABLE runs DROP COLUMN already_quarantined, DROP COLUMN dismissed, DROP COLUMN released;
DELETE FROM runs WHERE kind = 'quarantine';
ALTER TABLE runs DROP CONSTRAINT runs_kind_check;
ALTER TABLE runs ADD CONSTRAINT runs_kind_check CHECK (kind IN ('ingest', 'statement', 'reconcile'));
ALTER TABLE audit_events DROP CONSTRAINT audit_events_verdict_check;
ALTER TABLE audit_events ADD CONSTRAINT audit_events_verdict_check CHECK (verdict IN (
    'duplicate', 'conflict', 'in_file_duplicate', 'orphan_return', 'ambiguous_original', 'link_mismatch',
    'exceeds_original', 'settled_by_correction', 'held_by_conflict', 'possible_resend', 'ambiguous_settlement'));
