-- A bank statement states the account's balances besides its lines: an
-- opening balance, a closing balance, and the booked entries between them.
-- When they do not add up (an excerpt, an entry dated after the closing
-- balance) the statement is still imported, with a warning on its run, and
-- reconciliation reports the difference as a statement_unbalanced break that
-- needs a person. statement_balances keeps each statement's check per
-- currency, written by statement import with its lines, from the account
-- holder's side: signed minor units, a credit balance positive, credits
-- money in. Only statements that give both balances have a row.
--
-- A statement's row is unique on its own key within its source, like a
-- line: importing the statement again adds nothing. Rows are never changed.

-- +goose Up
CREATE TABLE statement_balances (
    tenant_id      text    NOT NULL,
    id             bigint  GENERATED ALWAYS AS IDENTITY,
    source         text    NOT NULL,
    balance_key    text    COLLATE "C" NOT NULL,
    format         text    NOT NULL,
    statement_id   text    NOT NULL DEFAULT '',
    account        text    COLLATE "C" NOT NULL DEFAULT '',
    account_last4  text    NOT NULL DEFAULT '',
    currency       char(3) NOT NULL,
    opening_minor  bigint  NOT NULL,
    closing_minor  bigint  NOT NULL,
    opening_date   date,
    closing_date   date    NOT NULL,
    entries        bigint  NOT NULL CHECK (entries >= 0),
    credits_minor  bigint  NOT NULL CHECK (credits_minor >= 0),
    debits_minor   bigint  NOT NULL CHECK (debits_minor >= 0),
    -- difference_minor is the closing balance minus the opening balance
    -- plus the booked entries: zero when the statement adds up.
    difference_minor numeric NOT NULL,
    run_id         bigint  NOT NULL,
    line           bigint  NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, source, balance_key)
);

CREATE UNIQUE INDEX statement_balances_id ON statement_balances (tenant_id, id);
CREATE INDEX statement_balances_period ON statement_balances (tenant_id, source, closing_date);

CREATE TRIGGER statement_balances_append_only BEFORE UPDATE OR DELETE ON statement_balances
    FOR EACH ROW EXECUTE FUNCTION clearing_reject_change();
CREATE TRIGGER statement_balances_no_truncate BEFORE TRUNCATE ON statement_balances
    FOR EACH STATEMENT EXECUTE FUNCTION clearing_reject_change();

-- Statement import writes them, as it writes statement lines; every role
-- reads them (the default privileges of 00003 grant SELECT).
GRANT INSERT ON statement_balances TO clearing_ingest;

-- A statement_unbalanced break names no ledger item and no line: it keeps
-- the statement's difference, which the report shows beside the bridge.
ALTER TABLE discrepancies ADD COLUMN statement_difference numeric;

-- +goose Down
ALTER TABLE discrepancies DROP COLUMN statement_difference;
DROP TABLE statement_balances;
