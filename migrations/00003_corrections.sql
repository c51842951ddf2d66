-- Operator approval of corrections, configuration, the roles that separate
-- ingest, approval and reading, and the late arrival of records a
-- correction already settled.

-- +goose Up

-- Every decision on a correction, append-only: who (the operator named on
-- the command line and the database role of the connection), when, why. An
-- operator approves a correction at most once, so two approvals above the
-- four-eyes threshold are always two people.
CREATE TABLE correction_decisions (
    tenant_id     text        NOT NULL,
    id            bigint      GENERATED ALWAYS AS IDENTITY,
    correction_id bigint      NOT NULL,
    decision      text        NOT NULL CHECK (decision IN ('approve', 'reject')),
    operator      text        NOT NULL CHECK (operator <> ''),
    reason        text        NOT NULL CHECK (reason <> ''),
    db_role       text        NOT NULL DEFAULT current_user,
    decided_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);

CREATE UNIQUE INDEX correction_decisions_once ON correction_decisions (tenant_id, correction_id, operator, decision);

CREATE TRIGGER correction_decisions_append_only BEFORE UPDATE OR DELETE ON correction_decisions
    FOR EACH ROW EXECUTE FUNCTION clearing_reject_change();
CREATE TRIGGER correction_decisions_no_truncate BEFORE TRUNCATE ON correction_decisions
    FOR EACH STATEMENT EXECUTE FUNCTION clearing_reject_change();

ALTER TABLE corrections ADD COLUMN posting_id bigint;

-- Settings kept in the database, so that no flag can override them.
CREATE TABLE config (
    tenant_id  text        NOT NULL,
    key        text        NOT NULL,
    value      text        NOT NULL,
    set_by     text        NOT NULL DEFAULT current_user,
    set_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, key)
);

-- Ingest counts records that a correction had already settled.
ALTER TABLE runs ADD COLUMN settled bigint NOT NULL DEFAULT 0;

-- A file keyed by line positions whose lines shifted is held whole.
ALTER TABLE audit_events DROP CONSTRAINT audit_events_verdict_check;
ALTER TABLE audit_events ADD CONSTRAINT audit_events_verdict_check CHECK (verdict IN (
    'duplicate', 'conflict', 'in_file_duplicate', 'orphan_return', 'ambiguous_original', 'link_mismatch',
    'exceeds_original', 'settled_by_correction', 'held_by_conflict'));

-- The roles. They are cluster-wide and may exist already (another database,
-- a concurrent migration), so creating one that exists is not an error.
-- +goose StatementBegin
DO $$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['clearing_ingest', 'clearing_approver', 'clearing_reader'] LOOP
        BEGIN
            EXECUTE format('CREATE ROLE %I NOLOGIN', r);
        EXCEPTION WHEN duplicate_object OR unique_violation THEN
            NULL;
        END;
    END LOOP;
END
$$;
-- +goose StatementEnd

-- clearing_reader reads everything and writes nothing.
GRANT USAGE ON SCHEMA public TO clearing_reader, clearing_ingest, clearing_approver;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO clearing_reader, clearing_ingest, clearing_approver;

-- clearing_ingest ingests files and imports statements: it adds postings,
-- legs, notices, audit events, statement lines and runs, and advances its
-- own runs. It cannot decide on corrections or change configuration.
GRANT INSERT ON postings, legs, notices, audit_events, statement_lines, runs TO clearing_ingest;
GRANT UPDATE ON runs TO clearing_ingest;

-- clearing_approver reconciles and decides on corrections, and posts the
-- approved ones through the ledger path.
GRANT INSERT ON reconciliations, reconciliation_totals, reconciliation_classes, discrepancies,
                corrections, correction_decisions, postings, legs TO clearing_approver;
GRANT UPDATE ON reconciliations, corrections TO clearing_approver;

-- Tables that later migrations create are readable by all three roles.
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO clearing_reader, clearing_ingest, clearing_approver;

-- Configuration is written only by the owner of the schema (the role that
-- ran the migrations): the admin.

-- +goose Down
ALTER TABLE audit_events DROP CONSTRAINT audit_events_verdict_check;
ALTER TABLE audit_events ADD CONSTRAINT audit_events_verdict_check CHECK (verdict IN (
    'duplicate', 'conflict', 'in_file_duplicate', 'orphan_return', 'ambiguous_original', 'link_mismatch',
    'exceeds_original', 'settled_by_correction'));
ALTER DEFAULT PRIVILEGES IN SCHEMA public REVOKE SELECT ON TABLES FROM clearing_reader, clearing_ingest, clearing_approver;
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM clearing_reader, clearing_ingest, clearing_approver;
REVOKE USAGE ON SCHEMA public FROM clearing_reader, clearing_ingest, clearing_approver;
ALTER TABLE runs DROP COLUMN settled;
DROP TABLE config;
ALTER TABLE corrections DROP COLUMN posting_id;
DROP TABLE correction_decisions;
