-- Statements from the other side, reconciliation runs with their
-- discrepancies, and the corrections they propose.

-- +goose Up

-- A BRIN index is nearly free to maintain on an append-only table filled in
-- value-date order, and lets a reconciliation read one period of a large
-- ledger without a B-tree on every posting.
CREATE INDEX postings_value_date ON postings USING brin (value_date);
-- Only returns, reversals and corrections refer to another posting.
CREATE INDEX postings_refers_to ON postings (tenant_id, refers_to) WHERE refers_to IS NOT NULL;

-- statement_lines is data about the other side: it never writes postings.
-- A line is unique on its own key within its source; a statement that lists
-- one key twice keeps both, numbered by occurrence, and reconciliation
-- reports the second as duplicate_in_statement.
CREATE TABLE statement_lines (
    tenant_id     text    NOT NULL,
    id            bigint  GENERATED ALWAYS AS IDENTITY (CACHE 1000),
    source        text    NOT NULL,
    line_key      text    COLLATE "C" NOT NULL,
    occurrence    integer NOT NULL CHECK (occurrence >= 1),
    reference     text    COLLATE "C" NOT NULL DEFAULT '',
    alt_reference text    COLLATE "C" NOT NULL DEFAULT '',
    amount_minor  bigint  NOT NULL CHECK (amount_minor >= 0),
    currency      char(3) NOT NULL,
    -- direction is seen from the counterparty, as on postings.
    direction     char(1) NOT NULL CHECK (direction IN ('C', 'D')),
    value_date    date    NOT NULL,
    line_type     text    NOT NULL CHECK (line_type IN ('payment', 'return', 'fee', 'settlement_total')),
    account       text    COLLATE "C" NOT NULL DEFAULT '',
    account_last4 text    NOT NULL DEFAULT '',
    digest        bytea   NOT NULL,
    run_id        bigint  NOT NULL,
    record_no     bigint  NOT NULL,
    line          bigint  NOT NULL,
    detail        text    NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, source, line_key, occurrence)
);

CREATE UNIQUE INDEX statement_lines_id ON statement_lines (tenant_id, id);
CREATE INDEX statement_lines_period ON statement_lines (tenant_id, source, value_date);

CREATE TRIGGER statement_lines_append_only BEFORE UPDATE OR DELETE ON statement_lines
    FOR EACH ROW EXECUTE FUNCTION clearing_reject_change();
CREATE TRIGGER statement_lines_no_truncate BEFORE TRUNCATE ON statement_lines
    FOR EACH STATEMENT EXECUTE FUNCTION clearing_reject_change();

-- Statement imports audit their duplicates and conflicts like ingest does.
ALTER TABLE audit_events ADD COLUMN existing_line_id bigint;
CREATE INDEX audit_events_line ON audit_events (tenant_id, existing_line_id) WHERE existing_line_id IS NOT NULL;

-- A reconciliation run: one source and period compared, with its totals.
CREATE TABLE reconciliations (
    tenant_id           text    NOT NULL,
    id                  bigint  GENERATED ALWAYS AS IDENTITY,
    source              text    NOT NULL,
    period_from         date    NOT NULL,
    period_to           date    NOT NULL,
    window_days         integer NOT NULL,
    tolerance_minor     bigint  NOT NULL,
    statement_last_date date,
    ledger_items        bigint  NOT NULL DEFAULT 0,
    statement_lines     bigint  NOT NULL DEFAULT 0,
    matched_ledger      bigint  NOT NULL DEFAULT 0,
    matched_statement   bigint  NOT NULL DEFAULT 0,
    created_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, id)
);

-- Per currency: the two totals the bridge starts from, summed straight
-- from the postings and lines compared (settlement totals excluded).
CREATE TABLE reconciliation_totals (
    tenant_id       text    NOT NULL,
    run_id          bigint  NOT NULL,
    currency        char(3) NOT NULL,
    ledger_total    bigint  NOT NULL,
    statement_total bigint  NOT NULL,
    PRIMARY KEY (tenant_id, run_id, currency)
);

-- Per currency and class: how many items ended there and what they sum to
-- on each side. The bridge's differences are ledger_amount minus
-- statement_amount; matched items are counted here, not listed.
CREATE TABLE reconciliation_classes (
    tenant_id        text    NOT NULL,
    run_id           bigint  NOT NULL,
    currency         char(3) NOT NULL,
    class            text    NOT NULL,
    ledger_items     bigint  NOT NULL,
    statement_lines  bigint  NOT NULL,
    ledger_amount    bigint  NOT NULL,
    statement_amount bigint  NOT NULL,
    PRIMARY KEY (tenant_id, run_id, currency, class)
);

-- clearing_amount_text writes signed minor units in major units with the
-- currency's exponent, exactly: (-50, 2) is '-0.50', (1234, 0) is '1234'.
CREATE FUNCTION clearing_amount_text(minor bigint, exponent integer) RETURNS text
LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT CASE WHEN minor < 0 THEN '-' ELSE '' END
        || round(abs(minor::numeric) / (10::numeric ^ exponent), exponent)::text
$$;

-- Every ledger item and statement line that did not simply match, in
-- exactly one class, with both sides' evidence. Amounts are signed minor
-- units (a credit to the counterparty is positive).
CREATE TABLE discrepancies (
    tenant_id        text    NOT NULL,
    run_id           bigint  NOT NULL,
    seq              integer NOT NULL,
    class            text    NOT NULL,
    reason           text    NOT NULL,
    is_break         boolean NOT NULL,
    explanation      text    NOT NULL,
    reference        text    COLLATE "C" NOT NULL,
    posting_id       bigint,
    posting_key      text    COLLATE "C",
    posting_kind     text,
    ledger_amount    bigint,
    ledger_currency  char(3),
    ledger_date      date,
    ledger_run_id    bigint,
    ledger_line      bigint,
    line_id          bigint,
    line_key         text    COLLATE "C",
    line_type        text,
    statement_amount bigint,
    statement_currency char(3),
    statement_date   date,
    statement_run_id bigint,
    statement_line   bigint,
    correction_key   text    COLLATE "C",
    PRIMARY KEY (tenant_id, run_id, seq)
);

CREATE INDEX discrepancies_posting ON discrepancies (tenant_id, posting_key) WHERE posting_key IS NOT NULL;
CREATE INDEX discrepancies_line ON discrepancies (tenant_id, line_key) WHERE line_key IS NOT NULL;

-- A correction proposed by reconciliation. Its key is derived from the
-- item it corrects, so proposing it again changes nothing. posting_key is
-- the key it posts under once approved: the statement line's own key for
-- missing_in_ledger (so that the original arriving later is recognised),
-- the correction key otherwise.
CREATE TABLE corrections (
    tenant_id        text    NOT NULL,
    id               bigint  GENERATED ALWAYS AS IDENTITY,
    correction_key   text    COLLATE "C" NOT NULL,
    posting_key      text    COLLATE "C" NOT NULL,
    class            text    NOT NULL CHECK (class IN ('missing_in_ledger', 'amount_mismatch', 'unbooked_fee')),
    status           text    NOT NULL DEFAULT 'proposed' CHECK (status IN ('proposed', 'approved', 'rejected', 'posted')),
    source           text    NOT NULL,
    reference        text    COLLATE "C" NOT NULL,
    refers_to        bigint,
    line_id          bigint,
    amount_minor     bigint  NOT NULL CHECK (amount_minor > 0),
    currency         char(3) NOT NULL,
    -- direction is the side of the counter account (suspense or
    -- adjustments), as on postings.
    direction        char(1) NOT NULL CHECK (direction IN ('C', 'D')),
    counter_account  text    COLLATE "C" NOT NULL,
    settlement_account text  COLLATE "C" NOT NULL,
    value_date       date    NOT NULL,
    explanation      text    NOT NULL,
    proposed_by_run  bigint  NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, correction_key)
);

CREATE UNIQUE INDEX corrections_id ON corrections (tenant_id, id);

-- clearing_side_text describes a signed amount in words for explanations:
-- (-9950, 'USD', 2) is 'a debit of 99.50 USD'.
CREATE FUNCTION clearing_side_text(amount bigint, currency text, exponent integer) RETURNS text
LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT CASE WHEN amount < 0 THEN 'a debit of ' ELSE 'a credit of ' END
        || clearing_amount_text(abs(amount), exponent) || ' ' || currency
$$;

-- +goose Down
DROP TABLE corrections, discrepancies, reconciliation_classes, reconciliation_totals, reconciliations, statement_lines;
DROP FUNCTION clearing_side_text(bigint, text, integer);
DROP FUNCTION clearing_amount_text(bigint, integer);
DROP INDEX audit_events_line;
ALTER TABLE audit_events DROP COLUMN existing_line_id;
DROP INDEX postings_refers_to;
DROP INDEX postings_value_date;
