-- A record may settle in another currency than its own: an IPM purchase in
-- JPY that the scheme settles with its issuer in USD carries the
-- reconciliation amount DE5 in DE50. The ledger's legs stay in the record's
-- own amount and currency; the settlement amount is kept beside them so
-- that reconciliation can net a settlement total (the scheme's position in
-- USD) over the items it settles, whatever their own currency. Both are
-- NULL when a record settles in its own currency, which is every record of
-- every other format.
--
-- A record may also name the payout or batch the other side settles it in
-- (settle_group: a CSV mapping's settlement_group column), on the ledger's
-- side and on the statement's: a settlement total that names a group
-- settles exactly the items of that group.
--
-- The seal of a posting covers them when they are set: the hash of a row
-- without them is the one migration 00006 defined, so every seal written
-- before this migration still holds.

-- +goose Up
ALTER TABLE postings ADD COLUMN settle_amount bigint, ADD COLUMN settle_currency text,
                     ADD COLUMN settle_group text COLLATE "C";
ALTER TABLE statement_lines ADD COLUMN settle_group text COLLATE "C";
CREATE INDEX postings_settle_group ON postings (settle_group, tenant_id) WHERE settle_group IS NOT NULL;
ALTER TABLE postings ADD CONSTRAINT postings_settle_both
    CHECK ((settle_amount IS NULL) = (settle_currency IS NULL)
           AND (settle_amount IS NULL OR settle_amount BETWEEN 0 AND 1000000000000000));

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION clearing_seal_hash_postings(p postings) RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN p.settle_currency IS NULL AND p.settle_group IS NULL
        THEN hash_record_extended(ROW(p.tenant_id, p.id, p.posting_key, p.kind, p.source, p.reference, p.alt_reference,
               p.value_date, p.amount_minor, p.currency, p.direction, p.account, p.account_last4, p.digest,
               p.refers_to, p.run_id, p.record_no, p.line, p.detail), 0) & 9223372036854775807
        ELSE hash_record_extended(ROW(p.tenant_id, p.id, p.posting_key, p.kind, p.source, p.reference, p.alt_reference,
               p.value_date, p.amount_minor, p.currency, p.direction, p.account, p.account_last4, p.digest,
               p.refers_to, p.run_id, p.record_no, p.line, p.detail, p.settle_amount, p.settle_currency,
               p.settle_group), 0) & 9223372036854775807 END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION clearing_seal_hash_postings(p postings) RETURNS bigint
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT hash_record_extended(ROW(p.tenant_id, p.id, p.posting_key, p.kind, p.source, p.reference, p.alt_reference,
               p.value_date, p.amount_minor, p.currency, p.direction, p.account, p.account_last4, p.digest,
               p.refers_to, p.run_id, p.record_no, p.line, p.detail), 0) & 9223372036854775807
$$;
-- +goose StatementEnd
ALTER TABLE postings DROP CONSTRAINT postings_settle_both;
DROP INDEX postings_settle_group;
ALTER TABLE statement_lines DROP COLUMN settle_group;
ALTER TABLE postings DROP COLUMN settle_amount, DROP COLUMN settle_currency, DROP COLUMN settle_group;
