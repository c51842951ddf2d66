-- Secondary indexes lead with the column they find rows by, and carry the
-- tenant second. A tenant the statistics do not know yet (a new tenant, or
-- one whose first large file has not been analysed) looks to the planner as
-- if it had no rows; with tenant_id first, every index then looked equally
-- good for "this tenant and this id", and the planner could walk all of the
-- tenant's postings through the wrong one, once per staged record. Led by
-- the looked-up column, these indexes cannot be entered by tenant alone; the
-- queries also compare the tenant as an expression where the primary key
-- could be (docs/decisions/tenant-unknown-to-the-planner.md). Only unique
-- constraints must begin with tenant_id; these are not unique, and ids are
-- identity values, unique across tenants.

-- +goose Up
DROP INDEX postings_id;
CREATE INDEX postings_id ON postings (id, tenant_id);
DROP INDEX postings_reference;
CREATE INDEX postings_reference ON postings (reference, tenant_id);
DROP INDEX postings_alt_reference;
CREATE INDEX postings_alt_reference ON postings (alt_reference, tenant_id) WHERE alt_reference IS NOT NULL;
DROP INDEX postings_refers_to;
CREATE INDEX postings_refers_to ON postings (refers_to, tenant_id) WHERE refers_to IS NOT NULL;
DROP INDEX statement_lines_id;
CREATE INDEX statement_lines_id ON statement_lines (id, tenant_id);

-- +goose Down
DROP INDEX statement_lines_id;
CREATE UNIQUE INDEX statement_lines_id ON statement_lines (tenant_id, id);
DROP INDEX postings_refers_to;
CREATE INDEX postings_refers_to ON postings (tenant_id, refers_to) WHERE refers_to IS NOT NULL;
DROP INDEX postings_alt_reference;
CREATE INDEX postings_alt_reference ON postings (tenant_id, alt_reference) WHERE alt_reference IS NOT NULL;
DROP INDEX postings_reference;
CREATE INDEX postings_reference ON postings (tenant_id, reference);
DROP INDEX postings_id;
CREATE UNIQUE INDEX postings_id ON postings (tenant_id, id);
