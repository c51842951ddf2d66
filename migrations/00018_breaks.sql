-- The break inventory. A break (its class and the key of its item, within a
-- source) keeps one identity across reconciliation runs: when it was first
-- and last seen, how many runs showed it, and its state. Open breaks need a
-- person. An operator may acknowledge one (a correction rejected for a good
-- reason, a timing difference the bank confirmed): it then no longer makes
-- reconcile exit 3, until its amount changes. A break that a later run of
-- its period no longer shows is closed by that run; seen again, it opens
-- again.
--
-- Reconciliation (clearing_approver) writes the inventory in the run's own
-- transaction. Acknowledgements go through clearing_ack_break, which
-- records the login the database knows (session_user), never a name the
-- caller types; no clearing_* role may write break_acks itself.

-- +goose Up
CREATE TABLE breaks (
    tenant_id     text        NOT NULL,
    id            bigint      GENERATED ALWAYS AS IDENTITY,
    source        text        NOT NULL,
    class         text        NOT NULL,
    item_key      text        COLLATE "C" NOT NULL,
    currency      text        NOT NULL,
    value_date    date        NOT NULL,
    -- The difference the newest run that showed it gave, signed minor
    -- units (a settlement total's net minus the total, ledger minus
    -- statement otherwise); a sum, so numeric.
    amount        numeric     NOT NULL,
    first_run     bigint      NOT NULL,
    first_seen    timestamptz NOT NULL DEFAULT now(),
    last_run      bigint      NOT NULL,
    last_seen     timestamptz NOT NULL DEFAULT now(),
    seen_in_runs  integer     NOT NULL DEFAULT 1,
    status        text        NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'acknowledged', 'closed')),
    -- The amount acknowledged: a run that shows another amount opens the
    -- break again.
    acked_amount  numeric,
    closed_run    bigint,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, source, class, item_key),
    CHECK ((status = 'closed') = (closed_run IS NOT NULL)),
    CHECK (status <> 'acknowledged' OR acked_amount IS NOT NULL)
);
CREATE INDEX breaks_open ON breaks (source, tenant_id, value_date) WHERE status <> 'closed';

CREATE TABLE break_acks (
    tenant_id  text        NOT NULL,
    break_id   bigint      NOT NULL,
    acked_at   timestamptz NOT NULL DEFAULT now(),
    login      text        NOT NULL,
    reason     text        NOT NULL CHECK (length(btrim(reason)) > 0),
    amount     numeric     NOT NULL,
    run_id     bigint      NOT NULL,
    PRIMARY KEY (tenant_id, break_id, acked_at, login)
);

CREATE TRIGGER break_acks_append_only BEFORE UPDATE OR DELETE ON break_acks
    FOR EACH ROW EXECUTE FUNCTION clearing_reject_change();

-- clearing_ack_break acknowledges an open or acknowledged break of the
-- calling login, with a reason; it records session_user and the break's
-- current amount. A closed break has nothing to acknowledge. Errors: CA011
-- no such break, CA012 closed.
-- +goose StatementBegin
CREATE FUNCTION clearing_ack_break(p_tenant text, p_break bigint, p_reason text) RETURNS text
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

REVOKE ALL ON FUNCTION clearing_ack_break(text, bigint, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION clearing_ack_break(text, bigint, text) TO clearing_approver;
GRANT SELECT ON breaks, break_acks TO clearing_reader, clearing_ingest, clearing_approver;
GRANT INSERT, UPDATE ON breaks TO clearing_approver;

-- +goose Down
DROP FUNCTION clearing_ack_break(text, bigint, text);
DROP TABLE break_acks;
DROP TABLE breaks;
