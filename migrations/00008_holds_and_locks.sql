-- Files held whole as a possible re-send, late arrivals whose settling
-- correction is ambiguous, and a lock on a source that only the roles that
-- write the ledger can take.

-- +goose Up

-- possible_resend: an ACH file whose entries match posted ones on
-- everything but their effective date, held whole for a person.
-- ambiguous_settlement: a record matched by reference to a correction that
-- more than one record of the file could have settled.
ALTER TABLE audit_events DROP CONSTRAINT audit_events_verdict_check;
ALTER TABLE audit_events ADD CONSTRAINT audit_events_verdict_check CHECK (verdict IN (
    'duplicate', 'conflict', 'in_file_duplicate', 'orphan_return', 'ambiguous_original', 'link_mismatch',
    'exceeds_original', 'settled_by_correction', 'held_by_conflict', 'possible_resend', 'ambiguous_settlement'));

-- One row per tenant and source, locked by every ledger write that a
-- concurrent one could race (an ingest chunk shares it, posting a
-- correction or a file keyed by line positions takes it alone). A row lock
-- needs UPDATE on the table, which clearing_reader does not have: an
-- advisory lock could be taken, and held, by any role.
CREATE TABLE ledger_locks (
    tenant_id text NOT NULL,
    source    text NOT NULL,
    PRIMARY KEY (tenant_id, source)
);

GRANT INSERT, UPDATE ON ledger_locks TO clearing_ingest, clearing_approver;

-- +goose Down
DROP TABLE ledger_locks;
ALTER TABLE audit_events DROP CONSTRAINT audit_events_verdict_check;
ALTER TABLE audit_events ADD CONSTRAINT audit_events_verdict_check CHECK (verdict IN (
    'duplicate', 'conflict', 'in_file_duplicate', 'orphan_return', 'ambiguous_original', 'link_mismatch',
    'exceeds_original', 'settled_by_correction', 'held_by_conflict'));
