-- The clearing_* roles write postings, legs and audit events only through
-- the ledger's routines (SECURITY DEFINER functions that `clearing migrate`
-- installs from internal/ledger), each for a run that the same login
-- started and that is still running.

-- +goose Up

-- The login that started a run, recorded by the database.
ALTER TABLE runs ADD COLUMN login text NOT NULL DEFAULT session_user;

-- clearing_own_run refuses a write for any run but a running one that the
-- session's login started; the schema's owner (and a superuser) may write
-- for any. The routines call it first, in their own search path.
-- +goose StatementBegin
CREATE FUNCTION clearing_own_run(p_tenant text, p_run bigint) RETURNS void
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

-- (clearing_approver's postings and legs go through the approval's own
-- routines: migrations/00007_logins.sql.)
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON postings, legs, audit_events FROM clearing_ingest, clearing_reader;
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON audit_events FROM clearing_approver;

-- +goose Down
GRANT INSERT ON postings, legs, audit_events TO clearing_ingest;
DROP FUNCTION clearing_own_run(text, bigint);
ALTER TABLE runs DROP COLUMN login;
