-- A file that breaks the letter of its format where no key, amount or date
-- depends on it is still read (DESIGN principle 10): a check digit of an
-- identifier, a sequence number out of order, a statement whose balances do
-- not add up. The reader's warnings are kept on the file's run, beside the
-- errors of a rejected one, so that 'clearing runs show RUN' says what the
-- file got wrong the morning after. They are written with the run, in its
-- INSERT, by the ingest role; like errors, at most a few hundred short
-- sentences, read only with their run.

-- +goose Up
ALTER TABLE runs ADD COLUMN warnings text[] NOT NULL DEFAULT '{}';

-- +goose Down
ALTER TABLE runs DROP COLUMN warnings;
