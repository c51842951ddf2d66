-- The ledger: runs, postings, legs, notices and the audit trail of every
-- record that was not posted. Postings, legs, notices and audit events are
-- append-only, enforced below by triggers.
--
-- Every unique constraint begins with tenant_id, and every query filters by
-- it, so that the schema can be distributed with the tenant as the
-- distribution column. Nothing is partitioned by time: PostgreSQL requires the
-- partition key in every unique index, and a time-partitioned postings table
-- would quietly lose global key uniqueness (docs/decisions/no-time-partitioning.md).
--
-- Keys use COLLATE "C": byte order is all a key needs, it is faster to
-- compare than a linguistic collation, and it never changes with an
-- operating-system upgrade.

-- +goose Up

CREATE TABLE runs (
    tenant_id     text        NOT NULL,
    id            bigint      GENERATED ALWAYS AS IDENTITY,
    kind          text        NOT NULL CHECK (kind IN ('ingest', 'statement', 'reconcile')),
    format        text        NOT NULL,
    source        text        NOT NULL,
    file_name     text        NOT NULL DEFAULT '',
    file_bytes    bigint      NOT NULL DEFAULT 0,
    file_sha256   bytea,
    status        text        NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'done')),
    started_at    timestamptz NOT NULL DEFAULT now(),
    finished_at   timestamptz,
    -- progress is the last staged record number applied; it is advanced in
    -- the same transaction as each chunk, so a re-run resumes exactly there.
    progress      bigint      NOT NULL DEFAULT 0,
    records       bigint      NOT NULL DEFAULT 0,
    posted        bigint      NOT NULL DEFAULT 0,
    duplicates    bigint      NOT NULL DEFAULT 0,
    conflicts     bigint      NOT NULL DEFAULT 0,
    quarantined   bigint      NOT NULL DEFAULT 0,
    notices       bigint      NOT NULL DEFAULT 0,
    skipped       bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, id)
);

CREATE INDEX runs_resume ON runs (tenant_id, file_sha256) WHERE status = 'running';

CREATE TABLE postings (
    tenant_id     text     NOT NULL,
    id            bigint   GENERATED ALWAYS AS IDENTITY (CACHE 1000),
    posting_key   text     COLLATE "C" NOT NULL,
    kind          text     NOT NULL CHECK (kind IN ('clearing', 'return', 'reversal', 'correction', 'reclass')),
    source        text     NOT NULL,
    reference     text     COLLATE "C",
    alt_reference text     COLLATE "C",
    value_date    date     NOT NULL,
    amount_minor  bigint   NOT NULL CHECK (amount_minor > 0),
    currency      char(3)  NOT NULL,
    -- direction is the side of the counterparty account this posting moves.
    direction     char(1)  NOT NULL CHECK (direction IN ('C', 'D')),
    account       text     COLLATE "C" NOT NULL,
    account_last4 text     NOT NULL DEFAULT '',
    digest        bytea    NOT NULL,
    -- refers_to is the posting that a return, reversal or correction undoes
    -- or adjusts.
    refers_to     bigint,
    run_id        bigint,
    record_no     bigint,
    line          bigint,
    detail        text     NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now(),
    -- The arbiter: a record is posted once per tenant and key.
    PRIMARY KEY (tenant_id, posting_key)
);

CREATE UNIQUE INDEX postings_id ON postings (tenant_id, id);
CREATE INDEX postings_reference ON postings (tenant_id, reference);
CREATE INDEX postings_alt_reference ON postings (tenant_id, alt_reference) WHERE alt_reference IS NOT NULL;

CREATE TABLE legs (
    tenant_id    text     NOT NULL,
    posting_id   bigint   NOT NULL,
    leg_no       smallint NOT NULL,
    account      text     COLLATE "C" NOT NULL,
    direction    char(1)  NOT NULL CHECK (direction IN ('C', 'D')),
    amount_minor bigint   NOT NULL CHECK (amount_minor > 0),
    currency     char(3)  NOT NULL,
    -- value_date repeats the posting's, so that balances as of a date read
    -- the legs alone.
    value_date   date     NOT NULL,
    PRIMARY KEY (tenant_id, posting_id, leg_no)
);

CREATE TABLE notices (
    tenant_id     text    NOT NULL,
    id            bigint  GENERATED ALWAYS AS IDENTITY,
    notice_key    text    COLLATE "C" NOT NULL,
    source        text    NOT NULL,
    reference     text    COLLATE "C",
    -- posting_id is the posting the notice is about, when it could be found.
    posting_id    bigint,
    value_date    date    NOT NULL,
    amount_minor  bigint  NOT NULL DEFAULT 0,
    currency      char(3) NOT NULL,
    direction     char(1) NOT NULL CHECK (direction IN ('C', 'D')),
    account       text    COLLATE "C" NOT NULL DEFAULT '',
    account_last4 text    NOT NULL DEFAULT '',
    digest        bytea   NOT NULL,
    run_id        bigint,
    record_no     bigint,
    line          bigint,
    detail        text    NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, notice_key)
);

CREATE INDEX notices_posting ON notices (tenant_id, posting_id) WHERE posting_id IS NOT NULL;

-- audit_events records every record that was not posted, and why. A
-- quarantined record keeps its economic content (never personal data) so an
-- operator can act on it.
CREATE TABLE audit_events (
    tenant_id        text    NOT NULL,
    id               bigint  GENERATED ALWAYS AS IDENTITY,
    record_key       text    COLLATE "C" NOT NULL,
    own_key          text    COLLATE "C" NOT NULL,
    verdict          text    NOT NULL CHECK (verdict IN (
                         'duplicate', 'conflict', 'in_file_duplicate',
                         'orphan_return', 'ambiguous_original', 'link_mismatch',
                         'exceeds_original', 'settled_by_correction')),
    needs_attention  boolean NOT NULL,
    run_id           bigint  NOT NULL,
    record_no        bigint  NOT NULL,
    line             bigint  NOT NULL,
    existing_posting_id bigint,
    existing_notice_id  bigint,
    differing_fields text[]  NOT NULL DEFAULT '{}',
    kind             text    NOT NULL,
    reference        text    COLLATE "C",
    amount_minor     bigint  NOT NULL,
    currency         char(3) NOT NULL,
    direction        char(1) NOT NULL,
    account          text    COLLATE "C" NOT NULL DEFAULT '',
    account_last4    text    NOT NULL DEFAULT '',
    value_date       date    NOT NULL,
    digest           bytea   NOT NULL,
    link_reference   text    COLLATE "C",
    link_prefix      text    COLLATE "C",
    link_suffix      text,
    detail           text    NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);

-- Events are found through the posting or notice they collided with; only
-- events that collided with nothing (a return without its original, say)
-- need their key indexed. A text index on every duplicate would be the
-- most expensive part of re-ingesting a file.
CREATE INDEX audit_events_posting ON audit_events (tenant_id, existing_posting_id) WHERE existing_posting_id IS NOT NULL;
CREATE INDEX audit_events_notice ON audit_events (tenant_id, existing_notice_id) WHERE existing_notice_id IS NOT NULL;
CREATE INDEX audit_events_key ON audit_events (tenant_id, record_key)
    WHERE existing_posting_id IS NULL AND existing_notice_id IS NULL;
CREATE INDEX audit_events_run ON audit_events (tenant_id, run_id);

-- +goose StatementBegin
CREATE FUNCTION clearing_reject_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'clearing: % on % is not allowed: the ledger is append-only; post a correcting entry instead', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'restrict_violation';
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER postings_append_only BEFORE UPDATE OR DELETE ON postings
    FOR EACH ROW EXECUTE FUNCTION clearing_reject_change();
CREATE TRIGGER postings_no_truncate BEFORE TRUNCATE ON postings
    FOR EACH STATEMENT EXECUTE FUNCTION clearing_reject_change();
CREATE TRIGGER legs_append_only BEFORE UPDATE OR DELETE ON legs
    FOR EACH ROW EXECUTE FUNCTION clearing_reject_change();
CREATE TRIGGER legs_no_truncate BEFORE TRUNCATE ON legs
    FOR EACH STATEMENT EXECUTE FUNCTION clearing_reject_change();
CREATE TRIGGER notices_append_only BEFORE UPDATE OR DELETE ON notices
    FOR EACH ROW EXECUTE FUNCTION clearing_reject_change();
CREATE TRIGGER notices_no_truncate BEFORE TRUNCATE ON notices
    FOR EACH STATEMENT EXECUTE FUNCTION clearing_reject_change();
CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION clearing_reject_change();
CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
    FOR EACH STATEMENT EXECUTE FUNCTION clearing_reject_change();

-- Legs are checked once per statement, over the rows that statement wrote:
-- every posting they name exists, has at least two legs, and balances per
-- currency. The ledger writes all legs of a posting in one statement, so a
-- statement that leaves any posting unbalanced is rejected whole. A row
-- trigger or a foreign key would check the same one row at a time.
-- +goose StatementBegin
CREATE FUNCTION clearing_check_legs() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    bad record;
BEGIN
    SELECT n.tenant_id, n.posting_id, n.currency,
           sum(CASE n.direction WHEN 'C' THEN n.amount_minor ELSE -n.amount_minor END) AS net,
           count(*) AS legs
      INTO bad
      FROM new_legs n
     GROUP BY n.tenant_id, n.posting_id, n.currency
    HAVING sum(CASE n.direction WHEN 'C' THEN n.amount_minor ELSE -n.amount_minor END) <> 0
        OR count(*) < 2
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'clearing: posting % does not balance in %: net % over % leg(s)',
            bad.posting_id, bad.currency, bad.net, bad.legs
            USING ERRCODE = 'check_violation';
    END IF;
    SELECT n.posting_id INTO bad
      FROM new_legs n
     WHERE NOT EXISTS (SELECT 1 FROM postings p WHERE p.tenant_id = n.tenant_id AND p.id = n.posting_id)
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'clearing: leg refers to missing posting %', bad.posting_id
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER legs_balance AFTER INSERT ON legs
    REFERENCING NEW TABLE AS new_legs
    FOR EACH STATEMENT EXECUTE FUNCTION clearing_check_legs();

-- clearing_differing_fields names the economic fields in which a record
-- differs from the posting that holds its key, for conflict reports. When
-- none of them differs the digest still did (a different link, say), and
-- the answer is "content".
CREATE FUNCTION clearing_differing_fields(
    a_amount bigint, a_currency text, a_direction text, a_account text, a_date date,
    b_amount bigint, b_currency text, b_direction text, b_account text, b_date date)
RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN cardinality(f) = 0 THEN ARRAY['content'] ELSE f END
      FROM (SELECT array_remove(ARRAY[
                CASE WHEN a_amount    <> b_amount    THEN 'amount'     END,
                CASE WHEN a_currency  <> b_currency  THEN 'currency'   END,
                CASE WHEN a_direction <> b_direction THEN 'direction'  END,
                CASE WHEN a_account   <> b_account   THEN 'account'    END,
                CASE WHEN a_date      <> b_date      THEN 'value_date' END], NULL) AS f) x
$$;

-- +goose Down
DROP TABLE audit_events, notices, legs, postings, runs;
DROP FUNCTION clearing_check_legs();
DROP FUNCTION clearing_differing_fields(bigint, text, text, text, date, bigint, text, text, text, date);
DROP FUNCTION clearing_reject_change();
