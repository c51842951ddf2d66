-- A file that ingest or statement import refuses leaves a run too, with
-- status 'rejected', its size, its SHA-256 when it could be read whole, and
-- the reasons it was refused, so that a failed night shows in 'clearing runs'
-- the next morning. Nothing else is written for it: no postings, legs,
-- statement lines or audit events (docs/decisions/rejected-runs.md).
--
-- The reasons are a text[] on the run rather than a table of their own: a
-- rejection lists at most a few dozen of them, they are read only with their
-- run, and the run is written in one INSERT by the ingest role, which has
-- INSERT on runs and nothing it would need for a second table.

-- +goose Up
ALTER TABLE runs ADD COLUMN errors text[] NOT NULL DEFAULT '{}';
ALTER TABLE runs DROP CONSTRAINT runs_status_check;
ALTER TABLE runs ADD CONSTRAINT runs_status_check CHECK (status IN ('running', 'done', 'rejected'));
-- A rejected run is finished when it is written, and says why.
ALTER TABLE runs ADD CONSTRAINT runs_rejected_says_why
    CHECK (status <> 'rejected' OR (finished_at IS NOT NULL AND cardinality(errors) > 0));

-- +goose Down
-- The schema before this migration cannot hold a rejected run: they go with
-- the column that holds their reasons. Nothing refers to them, as nothing
-- else was written for a rejected file.
DELETE FROM runs WHERE status = 'rejected';
ALTER TABLE runs DROP CONSTRAINT runs_rejected_says_why;
ALTER TABLE runs DROP CONSTRAINT runs_status_check;
ALTER TABLE runs ADD CONSTRAINT runs_status_check CHECK (status IN ('running', 'done'));
ALTER TABLE runs DROP COLUMN errors;
