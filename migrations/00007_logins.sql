-- Four eyes bound to database logins (DESIGN principle 11,
-- docs/decisions/four-eyes-logins.md), thresholds per currency in major
-- units, and roles that protect the money at the SQL level
-- (docs/decisions/database-roles.md).
--
-- An approval's identity is the login that made it, as the database knows
-- it (session_user), never a name the client typed. Decisions are recorded
-- and approved corrections posted only through the SECURITY DEFINER
-- functions below, which belong to the owner of the schema and check what
-- their caller may do; no clearing_* role may write correction_decisions,
-- change corrections, or write postings and legs of its own as an approver.

-- +goose Up

-- Each ISO 4217 currency's exponent, so that a threshold set in major units
-- becomes minor units inside the database. It repeats what internal/money
-- knows (moov-io/iso4217); a test checks that the two agree. It is not a
-- tenant table: on Citus it is a reference table.
CREATE TABLE currency_exponents (
    currency char(3)  PRIMARY KEY,
    exponent smallint NOT NULL CHECK (exponent BETWEEN 0 AND 4)
);

INSERT INTO currency_exponents (currency, exponent) VALUES
    ('AED', 2), ('AFN', 2), ('ALL', 2), ('AMD', 2), ('ANG', 2), ('AOA', 2), ('ARS', 2), ('AUD', 2), ('AWG', 2), ('AZN', 2),
    ('BAM', 2), ('BBD', 2), ('BDT', 2), ('BGN', 2), ('BHD', 3), ('BIF', 0), ('BMD', 2), ('BND', 2), ('BOB', 2), ('BOV', 2),
    ('BRL', 2), ('BSD', 2), ('BTN', 2), ('BWP', 2), ('BYN', 2), ('BZD', 2), ('CAD', 2), ('CDF', 2), ('CHE', 2), ('CHF', 2),
    ('CHW', 2), ('CLF', 4), ('CLP', 0), ('CNH', 2), ('CNY', 2), ('COP', 2), ('COU', 2), ('CRC', 2), ('CUC', 2), ('CUP', 2),
    ('CVE', 2), ('CZK', 2), ('DJF', 0), ('DKK', 2), ('DOP', 2), ('DZD', 2), ('EGP', 2), ('ERN', 2), ('ETB', 2), ('EUR', 2),
    ('FJD', 2), ('FKP', 2), ('GBP', 2), ('GEL', 2), ('GHS', 2), ('GIP', 2), ('GMD', 2), ('GNF', 0), ('GTQ', 2), ('GYD', 2),
    ('HKD', 2), ('HNL', 2), ('HRK', 2), ('HTG', 2), ('HUF', 2), ('IDR', 2), ('ILS', 2), ('INR', 2), ('IQD', 3), ('IRR', 2),
    ('ISK', 0), ('JMD', 2), ('JOD', 3), ('JPY', 0), ('KES', 2), ('KGS', 2), ('KHR', 2), ('KMF', 0), ('KPW', 2), ('KRW', 0),
    ('KWD', 3), ('KYD', 2), ('KZT', 2), ('LAK', 2), ('LBP', 2), ('LKR', 2), ('LRD', 2), ('LSL', 2), ('LYD', 3), ('MAD', 2),
    ('MDL', 2), ('MGA', 2), ('MKD', 2), ('MMK', 2), ('MNT', 2), ('MOP', 2), ('MRU', 2), ('MUR', 2), ('MVR', 2), ('MWK', 2),
    ('MXN', 2), ('MXV', 2), ('MYR', 2), ('MZN', 2), ('NAD', 2), ('NGN', 2), ('NIO', 2), ('NOK', 2), ('NPR', 2), ('NZD', 2),
    ('OMR', 3), ('PAB', 2), ('PEN', 2), ('PGK', 2), ('PHP', 2), ('PKR', 2), ('PLN', 2), ('PYG', 0), ('QAR', 2), ('RON', 2),
    ('RSD', 2), ('RUB', 2), ('RWF', 0), ('SAR', 2), ('SBD', 2), ('SCR', 2), ('SDG', 2), ('SEK', 2), ('SGD', 2), ('SHP', 2),
    ('SLE', 2), ('SLL', 2), ('SOS', 2), ('SRD', 2), ('SSP', 2), ('STN', 2), ('SVC', 2), ('SYP', 2), ('SZL', 2), ('THB', 2),
    ('TJS', 2), ('TMT', 2), ('TND', 3), ('TOP', 2), ('TRY', 2), ('TTD', 2), ('TWD', 2), ('TZS', 2), ('UAH', 2), ('UGX', 0),
    ('USD', 2), ('USN', 2), ('UYI', 0), ('UYU', 2), ('UYW', 4), ('UZS', 2), ('VED', 2), ('VES', 2), ('VND', 0), ('VUV', 0),
    ('WST', 2), ('XAD', 2), ('XAF', 0), ('XAG', 0), ('XAU', 0), ('XBA', 0), ('XBB', 0), ('XBC', 0), ('XBD', 0), ('XCD', 2),
    ('XCG', 2), ('XDR', 0), ('XOF', 0), ('XPD', 0), ('XPF', 0), ('XPT', 0), ('XSU', 0), ('XTS', 0), ('XUA', 0), ('XXX', 0),
    ('YER', 2), ('ZAR', 2), ('ZMW', 2), ('ZWG', 2), ('ZWL', 2);

-- clearing_person is a typed name as four eyes compares it: NFKC (so that a
-- full-width or compatibility form is the plain letter), without
-- zero-width and soft-hyphen characters, with runs of white space made one
-- space and trimmed, and case-folded. Folding uses ICU when the server has
-- it, as PostgreSQL's lower() under the C locale (the embedded cluster's)
-- folds ASCII only; upper() before lower() folds what lower() alone leaves
-- apart (ß and SS, ς and σ).
-- +goose StatementBegin
DO $do$
DECLARE
    fold text := CASE WHEN EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu')
                      THEN 'COLLATE "und-x-icu"' ELSE '' END;
BEGIN
    EXECUTE format($f$
CREATE FUNCTION clearing_person(name text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $body$
    SELECT lower(upper(btrim(regexp_replace(
               regexp_replace(normalize(name, NFKC), '[\u00AD\u180E\u200B-\u200F\u2060-\u2064\uFEFF]', '', 'g'),
               '[[:space:]]+', ' ', 'g')) %1$s))
$body$$f$, fold);
END
$do$;
-- +goose StatementEnd

-- clearing_is_owner says whether a login may act as the owner of the
-- schema: a superuser, the role that owns the ledger's tables (the one that
-- ran the migrations) or a member of it. Such a login can change anything,
-- so its approval never counts. A login that no longer exists is not one.
CREATE FUNCTION clearing_is_owner(login text) RETURNS boolean
LANGUAGE sql STABLE SET search_path = pg_catalog, public, pg_temp AS $$
    SELECT coalesce((SELECT r.rolsuper OR pg_has_role(r.oid, t.relowner, 'MEMBER')
                       FROM pg_roles r, pg_class t
                      WHERE r.rolname = login AND t.oid = 'public.corrections'::regclass), false)
$$;

-- clearing_is_approver says whether a login's decision counts: a member of
-- clearing_approver that is not the owner and cannot create roles (a login
-- with CREATEROLE could make itself a second approver login).
CREATE FUNCTION clearing_is_approver(login text) RETURNS boolean
LANGUAGE sql STABLE SET search_path = pg_catalog, public, pg_temp AS $$
    SELECT coalesce((SELECT pg_has_role(r.oid, 'clearing_approver', 'MEMBER') AND NOT r.rolcreaterole
                       FROM pg_roles r WHERE r.rolname = login), false)
       AND NOT clearing_is_owner(login)
$$;

-- clearing_approvals_needed is how many logins must approve a correction of
-- amount minor units of currency: one up to the tenant's threshold for the
-- currency (config key corrections.four_eyes_above.<currency>, in major
-- units), two above it, and two in a currency without a threshold.
CREATE FUNCTION clearing_approvals_needed(tenant text, currency text, amount_minor bigint) RETURNS integer
LANGUAGE sql STABLE SET search_path = pg_catalog, public, pg_temp AS $$
    SELECT CASE WHEN amount_minor <= (
                  SELECT c.value::numeric * 10::numeric ^ e.exponent
                    FROM config c JOIN currency_exponents e ON e.currency = clearing_approvals_needed.currency
                   WHERE c.tenant_id = tenant AND c.key = 'corrections.four_eyes_above.' || clearing_approvals_needed.currency
                     AND c.value ~ '^[0-9]{1,18}(\.[0-9]{1,4})?$')
                THEN 1 ELSE 2 END
$$;

-- A decision's identity is the login (session_user, recorded by the
-- database) and the person, the operator's typed name normalised. Rows
-- recorded before this migration have neither: they stay as history and
-- never count towards four eyes.
ALTER TABLE correction_decisions ADD COLUMN login text, ADD COLUMN person text;
DROP INDEX correction_decisions_once;
-- The database itself refuses a second decision of a kind by one login, and
-- by one person under another login.
CREATE UNIQUE INDEX correction_decisions_login_once ON correction_decisions (tenant_id, correction_id, login, decision);
CREATE UNIQUE INDEX correction_decisions_person_once ON correction_decisions (tenant_id, correction_id, person, decision);

-- clearing_approvals_counted is how many approvals of a correction count:
-- those by distinct logins that are approvers now, and by as many distinct
-- persons.
CREATE FUNCTION clearing_approvals_counted(tenant text, correction bigint) RETURNS integer
LANGUAGE sql STABLE SET search_path = pg_catalog, public, pg_temp AS $$
    SELECT least(count(DISTINCT d.login), count(DISTINCT d.person))::integer
      FROM correction_decisions d
     WHERE d.tenant_id = tenant AND d.correction_id = correction AND d.decision = 'approve'
       AND d.login IS NOT NULL AND d.person IS NOT NULL AND clearing_is_approver(d.login)
$$;

-- clearing_check_decider refuses a caller who may not decide on
-- corrections, and a name or reason that is empty or too long.
-- +goose StatementBegin
CREATE FUNCTION clearing_check_decider(operator text, reason text) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
    IF clearing_is_owner(session_user) THEN
        RAISE EXCEPTION 'clearing: login % can act as the owner of the schema (a superuser or the role that ran the migrations), which is never an approver; decide from a login in clearing_approver', session_user
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF NOT clearing_is_approver(session_user) THEN
        RAISE EXCEPTION 'clearing: login % may not decide on corrections: it is not a member of clearing_approver, or it can create roles (and so approver logins)', session_user
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF coalesce(clearing_person(operator), '') = '' OR btrim(coalesce(reason, '')) = ''
       OR length(operator) > 200 OR length(reason) > 2000 THEN
        RAISE EXCEPTION 'clearing: a decision needs the operator''s name (at most 200 characters) and a reason (at most 2000)'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
END;
$$;
-- +goose StatementEnd

-- clearing_approve records the calling login's approval of a correction and
-- says how many approvals count and how many it needs. It posts nothing:
-- clearing_post_correction does, once enough logins approved. Approving a
-- posted correction records nothing and reports it posted. Errors:
-- CA001 no such correction, CA002 rejected, CA003 this login already
-- approved, CA004 this person already approved under another login.
-- +goose StatementBegin
CREATE FUNCTION clearing_approve(tenant text, correction bigint, operator text, reason text,
                                 OUT status text, OUT approvals integer, OUT needed integer)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    c corrections%ROWTYPE;
    name text := clearing_person(operator);
BEGIN
    PERFORM clearing_check_decider(operator, reason);
    SELECT * INTO c FROM corrections k WHERE k.tenant_id = tenant AND k.id = correction FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'clearing: no correction % in tenant %', correction, tenant USING ERRCODE = 'CA001';
    END IF;
    approvals := clearing_approvals_counted(tenant, correction);
    IF c.status = 'posted' THEN
        status := 'posted';
        needed := approvals;
        RETURN;
    END IF;
    IF c.status = 'rejected' THEN
        RAISE EXCEPTION 'clearing: correction % (%) was rejected; rejection is final', c.id, c.correction_key USING ERRCODE = 'CA002';
    END IF;
    needed := clearing_approvals_needed(tenant, c.currency, c.amount_minor);
    -- The row lock orders the approvals of one correction, so these checks
    -- see every earlier one; the unique indexes refuse the same anyway. An
    -- approval that counted already is enough when the threshold has since
    -- risen: the caller then posts it, recording nothing more.
    IF approvals >= needed THEN
        status := 'approved';
        RETURN;
    END IF;
    IF EXISTS (SELECT 1 FROM correction_decisions d WHERE d.tenant_id = tenant AND d.correction_id = correction
                  AND d.decision = 'approve' AND d.login = session_user) THEN
        RAISE EXCEPTION 'clearing: login % already approved correction %; it needs % approvals from different logins and people',
            session_user, c.id, needed USING ERRCODE = 'CA003';
    END IF;
    IF EXISTS (SELECT 1 FROM correction_decisions d WHERE d.tenant_id = tenant AND d.correction_id = correction
                  AND d.decision = 'approve' AND d.person = name) THEN
        RAISE EXCEPTION 'clearing: % already approved correction % under another login; it needs % approvals from different logins and people',
            btrim(operator), c.id, needed USING ERRCODE = 'CA004';
    END IF;
    INSERT INTO correction_decisions (tenant_id, correction_id, decision, operator, reason, db_role, login, person)
    VALUES (tenant, correction, 'approve', operator, reason, session_user, session_user, name);
    IF c.status = 'proposed' THEN
        UPDATE corrections k SET status = 'approved' WHERE k.tenant_id = tenant AND k.id = correction;
    END IF;
    status := 'approved';
    approvals := clearing_approvals_counted(tenant, correction);
END;
$$;
-- +goose StatementEnd

-- clearing_reject records the calling login's rejection. Rejection is final;
-- rejecting again changes nothing. Errors: CA001 no such correction, CA007
-- already posted.
-- +goose StatementBegin
CREATE FUNCTION clearing_reject(tenant text, correction bigint, operator text, reason text) RETURNS text
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    c corrections%ROWTYPE;
BEGIN
    PERFORM clearing_check_decider(operator, reason);
    SELECT * INTO c FROM corrections k WHERE k.tenant_id = tenant AND k.id = correction FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'clearing: no correction % in tenant %', correction, tenant USING ERRCODE = 'CA001';
    END IF;
    IF c.status = 'posted' THEN
        RAISE EXCEPTION 'clearing: correction % posted under %; reverse it with a new correction', c.id, c.posting_key
            USING ERRCODE = 'CA007';
    END IF;
    IF c.status = 'rejected' THEN
        RETURN 'rejected';
    END IF;
    INSERT INTO correction_decisions (tenant_id, correction_id, decision, operator, reason, db_role, login, person)
    VALUES (tenant, correction, 'reject', operator, reason, session_user, session_user, clearing_person(operator))
    ON CONFLICT DO NOTHING;
    UPDATE corrections k SET status = 'rejected' WHERE k.tenant_id = tenant AND k.id = correction;
    RETURN 'rejected';
END;
$$;
-- +goose StatementEnd

-- clearing_post_correction posts an approved correction: one posting of
-- kind correction under its posting key, and its two legs, with the amount,
-- currency, accounts and direction of the corrections row, never of the
-- caller. It refuses unless as many logins and people as the correction
-- needs approved it. The digest is formats.Digest of the same record. It
-- returns the posting's id; for a correction already posted, the id it was
-- posted under, posting nothing. Errors: CA001 no such correction, CA002
-- rejected, CA005 not approved enough, CA006 the posting key is taken (the
-- money arrived).
-- +goose StatementBegin
CREATE FUNCTION clearing_post_correction(tenant text, correction bigint) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    c corrections%ROWTYPE;
    have integer;
    need integer;
    posting bigint;
BEGIN
    IF NOT clearing_is_approver(session_user) THEN
        RAISE EXCEPTION 'clearing: login % may not post corrections: only a login in clearing_approver that is not the owner may', session_user
            USING ERRCODE = 'insufficient_privilege';
    END IF;
    SELECT * INTO c FROM corrections k WHERE k.tenant_id = tenant AND k.id = correction FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'clearing: no correction % in tenant %', correction, tenant USING ERRCODE = 'CA001';
    END IF;
    IF c.status = 'posted' THEN
        RETURN c.posting_id;
    END IF;
    IF c.status = 'rejected' THEN
        RAISE EXCEPTION 'clearing: correction % (%) was rejected; rejection is final', c.id, c.correction_key USING ERRCODE = 'CA002';
    END IF;
    have := clearing_approvals_counted(tenant, correction);
    need := clearing_approvals_needed(tenant, c.currency, c.amount_minor);
    IF have < need THEN
        RAISE EXCEPTION 'clearing: correction % has % of the % approvals by different logins and people it needs', c.id, have, need
            USING ERRCODE = 'CA005';
    END IF;
    INSERT INTO postings (tenant_id, posting_key, kind, source, reference, value_date, amount_minor, currency,
                          direction, account, digest, refers_to, detail)
    VALUES (tenant, c.posting_key, 'correction', c.source, c.reference, c.value_date, c.amount_minor, c.currency,
            c.direction, c.counter_account,
            sha256(convert_to(concat_ws(E'\x1f', 'v1', 'correction', c.posting_key, c.amount_minor::text, c.currency::text,
                                        c.direction::text, '', to_char(c.value_date, 'YYYY-MM-DD')) || E'\x1f', 'UTF8')),
            c.refers_to, 'correction of ' || c.class)
    ON CONFLICT (tenant_id, posting_key) DO NOTHING
    RETURNING id INTO posting;
    IF posting IS NULL THEN
        RAISE EXCEPTION 'clearing: the ledger already holds %, so the money correction % would post has arrived', c.posting_key, c.id
            USING ERRCODE = 'CA006';
    END IF;
    INSERT INTO legs (tenant_id, posting_id, leg_no, account, direction, amount_minor, currency, value_date)
    VALUES (tenant, posting, 1, c.counter_account, c.direction, c.amount_minor, c.currency, c.value_date),
           (tenant, posting, 2, c.settlement_account, CASE c.direction WHEN 'C' THEN 'D' ELSE 'C' END,
            c.amount_minor, c.currency, c.value_date);
    UPDATE corrections k SET status = 'posted', posting_id = posting WHERE k.tenant_id = tenant AND k.id = correction;
    RETURN posting;
END;
$$;
-- +goose StatementEnd

-- Reconciliation proposes corrections with a set-based INSERT ... SELECT
-- from its discrepancies, as clearing_approver. The discrepancies are the
-- approver's own writing, so the guard checks each proposal against what
-- the approver cannot write: the statement line it is for and, for an
-- amount mismatch, the posting and the corrections already folded into it.
-- The amount, currency, direction, value date, keys and settlement account
-- must be the ones that line (and posting) give; a proposal starts
-- proposed, unposted. The counter account is the reconciliation's choice
-- (suspense or adjustments), shown to every approver.
-- +goose StatementBegin
CREATE FUNCTION clearing_check_proposal() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, public, pg_temp AS $$
DECLARE
    l statement_lines%ROWTYPE;
    p postings%ROWTYPE;
    delta bigint;
    want_key text;
    want_posting_key text;
BEGIN
    IF NEW.status <> 'proposed' OR NEW.posting_id IS NOT NULL THEN
        RAISE EXCEPTION 'clearing: a correction is proposed unposted; % with posting % is not a proposal', NEW.status, NEW.posting_id
            USING ERRCODE = 'check_violation';
    END IF;
    SELECT * INTO l FROM statement_lines s WHERE s.tenant_id = NEW.tenant_id AND s.id = NEW.line_id;
    IF NOT FOUND OR l.source <> NEW.source THEN
        RAISE EXCEPTION 'clearing: correction % names no statement line of source %', NEW.correction_key, NEW.source
            USING ERRCODE = 'check_violation';
    END IF;
    delta := CASE l.direction WHEN 'C' THEN l.amount_minor ELSE -l.amount_minor END;
    IF NEW.class = 'amount_mismatch' THEN
        SELECT * INTO p FROM postings q WHERE q.tenant_id = NEW.tenant_id AND q.id = NEW.refers_to;
        IF NOT FOUND OR p.source <> NEW.source OR p.currency <> l.currency THEN
            RAISE EXCEPTION 'clearing: correction % names no posting of source % in %', NEW.correction_key, NEW.source, l.currency
                USING ERRCODE = 'check_violation';
        END IF;
        delta := delta - (CASE p.direction WHEN 'C' THEN p.amount_minor ELSE -p.amount_minor END)
               - coalesce((SELECT sum(CASE a.direction WHEN 'C' THEN a.amount_minor ELSE -a.amount_minor END)
                             FROM postings a
                            WHERE a.tenant_id = NEW.tenant_id AND a.refers_to = p.id AND a.kind = 'correction'), 0);
        want_key := p.posting_key || ':correction:amount_mismatch';
        want_posting_key := want_key;
    ELSE
        IF NEW.refers_to IS NOT NULL THEN
            RAISE EXCEPTION 'clearing: correction % of class % adjusts no posting', NEW.correction_key, NEW.class
                USING ERRCODE = 'check_violation';
        END IF;
        want_key := l.line_key || ':correction:' || NEW.class;
        want_posting_key := CASE NEW.class WHEN 'missing_in_ledger' THEN l.line_key ELSE want_key END;
    END IF;
    IF delta = 0 OR NEW.amount_minor <> abs(delta) OR NEW.direction <> (CASE WHEN delta > 0 THEN 'C' ELSE 'D' END)
       OR NEW.currency <> l.currency OR NEW.value_date <> l.value_date
       OR NEW.correction_key <> want_key OR NEW.posting_key <> want_posting_key
       OR NEW.settlement_account <> 'settlement:' || NEW.source THEN
        RAISE EXCEPTION 'clearing: correction % does not match statement line % (amount %, currency %, direction %, date %)',
            NEW.correction_key, l.line_key, NEW.amount_minor, NEW.currency, NEW.direction, NEW.value_date
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER corrections_proposal_checked BEFORE INSERT ON corrections
    FOR EACH ROW EXECUTE FUNCTION clearing_check_proposal();

-- Only the functions above decide on corrections and post them. No
-- clearing_* role updates or deletes corrections or writes decisions, and
-- the approver writes no postings or legs of its own. clearing_approver
-- keeps INSERT on corrections for reconciliation's proposals, which the
-- trigger above checks.
-- +goose StatementBegin
DO $$
DECLARE
    r text;
BEGIN
    -- Every clearing_* role but the owner's own (a login named clearing_admin
    -- that ran the migrations keeps its tables).
    FOR r IN SELECT rolname FROM pg_roles
              WHERE rolname LIKE 'clearing\_%' AND NOT rolsuper
                AND NOT pg_has_role(oid, (SELECT relowner FROM pg_class WHERE oid = 'public.corrections'::regclass), 'MEMBER') LOOP
        EXECUTE format('REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON corrections, correction_decisions FROM %I', r);
    END LOOP;
END
$$;
-- +goose StatementEnd
REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON corrections, correction_decisions FROM PUBLIC;
REVOKE INSERT ON postings, legs FROM clearing_approver;
GRANT INSERT ON corrections TO clearing_approver;

-- PostgreSQL grants EXECUTE on a new function to PUBLIC.
REVOKE ALL ON FUNCTION clearing_approve(text, bigint, text, text), clearing_reject(text, bigint, text, text),
                       clearing_post_correction(text, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION clearing_approve(text, bigint, text, text), clearing_reject(text, bigint, text, text),
                          clearing_post_correction(text, bigint) TO clearing_approver;

-- A role that can create objects in the functions' schema could shadow
-- what they call. PostgreSQL 15 no longer lets PUBLIC create in public; an
-- older database upgraded in place still does.
REVOKE CREATE ON SCHEMA public FROM PUBLIC;

-- The one four-eyes threshold in minor units of every currency becomes one
-- threshold per currency in major units, for each currency the tenant has
-- corrections in: the same amount in minor units as before, so nothing in
-- flight needs more or fewer approvals. A currency without one needs two
-- approvals; the old default (100000 minor units in every currency) is not
-- carried over (docs/decisions/four-eyes-logins.md).
INSERT INTO config (tenant_id, key, value, set_by)
SELECT o.tenant_id, 'corrections.four_eyes_above.' || e.currency,
       trim_scale(o.value::numeric / 10::numeric ^ e.exponent)::text,
       'migration 00007 from corrections.four_eyes_above_minor'
  FROM config o
  JOIN (SELECT DISTINCT tenant_id, currency FROM corrections) k ON k.tenant_id = o.tenant_id
  JOIN currency_exponents e ON e.currency = k.currency
 WHERE o.key = 'corrections.four_eyes_above_minor' AND o.value ~ '^[0-9]{1,18}$'
ON CONFLICT (tenant_id, key) DO NOTHING;
DELETE FROM config WHERE key = 'corrections.four_eyes_above_minor';

-- +goose Down
INSERT INTO config (tenant_id, key, value, set_by)
SELECT c.tenant_id, 'corrections.four_eyes_above_minor',
       min(trunc(c.value::numeric * 10::numeric ^ e.exponent))::bigint::text, 'migration 00007 down'
  FROM config c JOIN currency_exponents e ON c.key = 'corrections.four_eyes_above.' || e.currency
 WHERE c.value ~ '^[0-9]{1,18}(\.[0-9]{1,4})?$'
 GROUP BY c.tenant_id
ON CONFLICT (tenant_id, key) DO NOTHING;
DELETE FROM config WHERE key LIKE 'corrections.four\_eyes\_above.%';
-- CREATE on public is not given back to PUBLIC: PostgreSQL 15 does not
-- give it either.
GRANT INSERT ON correction_decisions, postings, legs TO clearing_approver;
GRANT UPDATE ON corrections TO clearing_approver;
DROP TRIGGER corrections_proposal_checked ON corrections;
DROP FUNCTION clearing_check_proposal();
DROP FUNCTION clearing_post_correction(text, bigint);
DROP FUNCTION clearing_reject(text, bigint, text, text);
DROP FUNCTION clearing_approve(text, bigint, text, text);
DROP FUNCTION clearing_check_decider(text, text);
DROP FUNCTION clearing_approvals_counted(text, bigint);
DROP INDEX correction_decisions_person_once;
DROP INDEX correction_decisions_login_once;
CREATE UNIQUE INDEX correction_decisions_once ON correction_decisions (tenant_id, correction_id, operator, decision);
ALTER TABLE correction_decisions DROP COLUMN person, DROP COLUMN login;
DROP FUNCTION clearing_approvals_needed(text, text, bigint);
DROP FUNCTION clearing_is_approver(text);
DROP FUNCTION clearing_is_owner(text);
DROP FUNCTION clearing_person(text);
DROP TABLE currency_exponents;
