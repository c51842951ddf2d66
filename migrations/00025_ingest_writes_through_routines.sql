-- A clearing_ingest login now reaches notices, statement lines, statement
-- balances and the sources' locks only through the routines of the
-- schema's owner (clearing_post_notices, clearing_add_lines,
-- clearing_add_balances, clearing_lock_source), as it already reached
-- postings, legs and audit events (00010). A transaction that writes a
-- tenant's shard as the owner may not touch it as another role on Citus,
-- so an ingest's chunk and a statement import go through routines from
-- end to end; the direct grants are no longer used, and are taken back.
-- The login still writes its runs' own rows (claim, reject).

-- +goose Up
REVOKE INSERT ON notices, statement_lines, statement_balances FROM clearing_ingest;
REVOKE INSERT, UPDATE ON ledger_locks FROM clearing_ingest;

-- +goose Down
GRANT INSERT ON notices, statement_lines, statement_balances TO clearing_ingest;
GRANT INSERT, UPDATE ON ledger_locks TO clearing_ingest;
