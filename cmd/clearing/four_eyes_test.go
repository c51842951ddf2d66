package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clearing-dev/clearing/formats"
	"github.com/clearing-dev/clearing/internal/money"
	"github.com/clearing-dev/clearing/internal/pgtest"
)

// approverCLI is c connected as a login of its own for the person name, a
// member of clearing_approver, as README says operators are set up: the
// test harness itself connects as a superuser, the owner of the schema,
// whose approvals never count. The login is the same for every call with
// name in one test (and in its subtests), so that "alice" twice is one
// login and "alice" and "bob" are two.
func approverCLI(c *cli, name string) *cli {
	c.t.Helper()
	a := *c
	a.url = loginURL(c, "approver", name)
	return &a
}

// loginURL creates (once) a login role in clearing_<group> for name and
// returns c's database URL connected as it. Roles are cluster-wide, so the
// role's name is unique to the test; the test that created it drops it when
// it ends. A subtest uses its parent's login for name when the parent has
// one: the crash tests compare a clean run in the parent with runs in
// subtests, logins included.
func loginURL(c *cli, group, name string) string {
	c.t.Helper()
	role, exists := loginName(c, name)
	if !exists {
		_, err := c.pool.Exec(context.Background(), fmt.Sprintf(`CREATE ROLE %s LOGIN IN ROLE clearing_%s`, role, group))
		var pgErr *pgconn.PgError
		if err != nil && !(errors.As(err, &pgErr) && pgErr.Code == "42710") { // created meanwhile
			c.t.Fatal(err)
		}
		if err == nil {
			c.t.Cleanup(func() { c.pool.Exec(context.Background(), "DROP ROLE IF EXISTS "+role) })
		}
	}
	u, err := pgtest.AsUser(c.url, role)
	if err != nil {
		c.t.Fatal(err)
	}
	return u
}

// loginName is the role name of name's login in c's test: the login of
// the nearest enclosing test that has one, else the test's own, which does
// not exist yet.
func loginName(c *cli, name string) (role string, exists bool) {
	c.t.Helper()
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	parts := strings.Split(c.t.Name(), "/")
	for i := range parts {
		h := fnv.New32a()
		h.Write([]byte(strings.Join(parts[:i+1], "/")))
		role = fmt.Sprintf("t%08x_%s", h.Sum32(), b.String())
		if err := c.pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)`,
			role).Scan(&exists); err != nil {
			c.t.Fatal(err)
		}
		if exists {
			return role, true
		}
	}
	return role, false
}

// loginOf is the role name of name's login, which must exist.
func loginOf(c *cli, name string) string {
	c.t.Helper()
	role, exists := loginName(c, name)
	if !exists {
		c.t.Fatalf("no login for %s", name)
	}
	return role
}

// decisionRow is one row of correction_decisions, as the database recorded
// it.
type decisionRow struct{ decision, operator, login, person string }

func (c *cli) decisions(id int64) []decisionRow {
	c.t.Helper()
	rows, err := c.pool.Query(context.Background(), `
SELECT decision, operator, coalesce(login, ''), coalesce(person, '') FROM correction_decisions
 WHERE tenant_id = $1 AND correction_id = $2 ORDER BY id`, c.tenant, id)
	if err != nil {
		c.t.Fatal(err)
	}
	defer rows.Close()
	var out []decisionRow
	for rows.Next() {
		var d decisionRow
		if err := rows.Scan(&d.decision, &d.operator, &d.login, &d.person); err != nil {
			c.t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

// correctionState is what the ledger holds for one correction: its status,
// and the postings and legs under its posting key.
func (c *cli) correctionState(k correctionJSON) (status string, postings, legs int64) {
	c.t.Helper()
	if err := c.pool.QueryRow(context.Background(), `SELECT status FROM corrections WHERE tenant_id = $1 AND id = $2`,
		c.tenant, k.ID).Scan(&status); err != nil {
		c.t.Fatal(err)
	}
	postings = c.count(`SELECT count(*) FROM postings WHERE tenant_id = $1 AND posting_key = $2`, c.tenant, k.PostingKey)
	legs = c.count(`SELECT count(*) FROM legs l JOIN postings p ON p.tenant_id = l.tenant_id AND p.id = l.posting_id
	                 WHERE p.tenant_id = $1 AND p.posting_key = $2`, c.tenant, k.PostingKey)
	return status, postings, legs
}

// A correction above the threshold needs two logins and two people. One
// login typing another spelling of its name, another login typing the same
// name, and the owner of the schema are all refused, by the database, and
// leave no row; the second real operator posts it, once.
func TestFourEyesCountsLoginsAndPeopleNotTypedNames(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	p := plant(t, c)
	p.importInto(c)
	from, to := p.period()
	c.reconcile(3, from, to)
	missing := byClass(c.corrections(), "missing_in_ledger")
	c.must(0, "config", "set", "corrections.four_eyes_above.USD", "1") // 1.00 USD: the 123.45 USD correction needs two
	approve := func(as *cli, want int, name string) result {
		t.Helper()
		return as.must(want, "corrections", "approve", fmt.Sprint(missing.ID), "--operator", name, "--reason", "checked with the bank")
	}
	alice, mallory, bob := approverCLI(c, "alice"), approverCLI(c, "mallory"), approverCLI(c, "bob")

	approve(alice, 0, "alice")
	for _, name := range []string{"Alice", "alice ", "ALICE", "bob"} {
		if r := approve(alice, 1, name); !strings.Contains(r.stderr, "different operator") {
			t.Fatalf("the same login approving again as %q:\n%v", name, r)
		}
	}
	// Another login, the same person however it is spelt.
	for _, name := range []string{"Alice", " alice", "ａｌｉｃｅ", "al\u200bice", "alice\u00a0"} {
		if r := approve(mallory, 1, name); !strings.Contains(r.stderr, "different operator") {
			t.Fatalf("another login approving as %q:\n%v", name, r)
		}
	}
	// The owner (the harness's superuser, which ran the migrations).
	if r := c.must(1, "corrections", "approve", fmt.Sprint(missing.ID), "--operator", "carol", "--reason", "x"); !strings.Contains(r.stderr, "owner") {
		t.Fatalf("the owner's approval:\n%v", r)
	}
	ds := c.decisions(missing.ID)
	if len(ds) != 1 || ds[0].login != loginOf(c, "alice") || ds[0].person != "alice" {
		t.Fatalf("decisions after the refused approvals: %+v, want alice's alone", ds)
	}
	if status, postings, legs := c.correctionState(missing); status != "approved" || postings != 0 || legs != 0 {
		t.Fatalf("one login posted a correction above the threshold: %s, %d postings, %d legs", status, postings, legs)
	}

	r := approve(bob, 0, "Bob")
	if !strings.Contains(r.stdout, "posted") {
		t.Fatalf("the second operator:\n%v", r)
	}
	approve(mallory, 0, "mallory") // posted already: nothing more
	ds = c.decisions(missing.ID)
	if len(ds) != 2 || ds[1].login != loginOf(c, "bob") || ds[1].person != "bob" || ds[1].operator != "Bob" {
		t.Fatalf("decisions: %+v, want alice's and bob's", ds)
	}
	if status, postings, legs := c.correctionState(missing); status != "posted" || postings != 1 || legs != 2 {
		t.Fatalf("after two operators: %s, %d postings, %d legs; want posted once with two legs", status, postings, legs)
	}
	// The posting is the corrections row's, with the digest ingest would
	// compute for the same record.
	var amount int64
	var kind, currency, direction, account string
	var digest []byte
	var date time.Time
	if err := c.pool.QueryRow(context.Background(), `
SELECT kind, amount_minor, currency, direction, account, digest, value_date FROM postings WHERE tenant_id = $1 AND posting_key = $2`,
		c.tenant, missing.PostingKey).Scan(&kind, &amount, &currency, &direction, &account, &digest, &date); err != nil {
		t.Fatal(err)
	}
	want := formats.Digest(&formats.Record{Key: missing.PostingKey, Kind: "correction", Amount: amount, Currency: currency,
		Direction: formats.Direction(direction), ValueDate: date})
	if kind != "correction" || amount != missing.Amount || account != "suspense:ach" || string(digest) != string(want[:]) {
		t.Fatalf("posted %s %d %s to %s, digest %x; want correction %d USD to suspense:ach, digest %x",
			kind, amount, currency, account, digest, missing.Amount, want)
	}
	c.must(0, "ledger", "verify")
}

// A currency without a threshold needs two approvals for every correction,
// however small.
func TestACurrencyWithoutAThresholdNeedsTwoApprovals(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	p := plant(t, c)
	p.importInto(c)
	from, to := p.period()
	c.reconcile(3, from, to)
	mismatch := byClass(c.corrections(), "amount_mismatch") // 0.50 USD
	c.must(0, "config", "set", "corrections.four_eyes_above.EUR", "1000000")
	c.approve(0, mismatch.ID, "alice")
	if status, postings, _ := c.correctionState(mismatch); status != "approved" || postings != 0 {
		t.Fatalf("one approval of a 0.50 USD correction, USD without a threshold: %s, %d postings", status, postings)
	}
	c.approve(0, mismatch.ID, "bob")
	if status, postings, legs := c.correctionState(mismatch); status != "posted" || postings != 1 || legs != 2 {
		t.Fatalf("two approvals: %s, %d postings, %d legs", status, postings, legs)
	}
}

// Thresholds are per currency in major units: 1000 is 1,000.00 USD and
// 1,000 JPY. The old single number in minor units meant 100,000 JPY.
func TestFourEyesThresholdsArePerCurrencyInMajorUnits(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	const day = "2026-11-30"
	lines := []stmtLine{
		{id: "USD-AT", ref: "R1", amount: 100_000, currency: "USD", date: day, typ: "payment"},   // 1,000.00 USD
		{id: "USD-OVER", ref: "R2", amount: 100_001, currency: "USD", date: day, typ: "payment"}, // 1,000.01 USD
		{id: "JPY-AT", ref: "R3", amount: 1_000, currency: "JPY", date: day, typ: "payment"},     // 1,000 JPY
		{id: "JPY-OVER", ref: "R4", amount: 1_001, currency: "JPY", date: day, typ: "payment"},
		{id: "JPY-OLD", ref: "R5", amount: 100_000, currency: "JPY", date: day, typ: "payment"},  // under the old 100000 minor
		{id: "BHD-AT", ref: "R6", amount: 1_000_000, currency: "BHD", date: day, typ: "payment"}, // 1,000.000 BHD
		{id: "EUR-ANY", ref: "R7", amount: 1, currency: "EUR", date: day, typ: "payment"},
		c.ledgerOn(day), // matched: a run with the ledger side empty proposes nothing
	}
	c.must(0, "statement", "import", "--source", "ach", "--format", "csv", "--map", c.file("m.toml", []byte(statementMapping)),
		c.statement("bank.csv", lines))
	c.reconcile(3, day, day)
	for _, kv := range [][2]string{{"USD", "1000"}, {"jpy", "1000"}, {"BHD", "1000"}} {
		c.must(0, "config", "set", "corrections.four_eyes_above."+kv[0], kv[1])
	}
	want := map[string]string{"USD-AT": "posted", "USD-OVER": "approved", "JPY-AT": "posted", "JPY-OVER": "approved",
		"JPY-OLD": "approved", "BHD-AT": "posted", "EUR-ANY": "approved"}
	cs := c.corrections()
	if len(cs) != len(want) {
		t.Fatalf("%d corrections proposed, want %d: %+v", len(cs), len(want), cs)
	}
	for _, k := range cs {
		c.approve(0, k.ID, "alice")
	}
	for _, k := range cs {
		line := strings.TrimPrefix(k.PostingKey, "csv:ach:")
		status, postings, _ := c.correctionState(k)
		if status != want[line] || (postings == 1) != (want[line] == "posted") {
			t.Errorf("%s (%d %s) after one approval: %s with %d postings, want %s", line, k.Amount, k.Currency, status, postings, want[line])
		}
	}

	// Raised above it after one approval, the threshold lets that approval
	// post the correction: approving again records nothing and posts.
	over := cs[0]
	for _, k := range cs {
		if k.PostingKey == "csv:ach:USD-OVER" {
			over = k
		}
	}
	c.must(0, "config", "set", "corrections.four_eyes_above.USD", "2000")
	c.approve(0, over.ID, "alice")
	if status, postings, _ := c.correctionState(over); status != "posted" || postings != 1 || len(c.decisions(over.ID)) != 1 {
		t.Fatalf("USD-OVER after the threshold rose: %s, %d postings, %d decisions", status, postings, len(c.decisions(over.ID)))
	}
	c.must(0, "config", "set", "corrections.four_eyes_above.USD", "1000")

	// What config accepts and shows.
	var got []struct {
		Key        string `json:"key"`
		Value      string `json:"value"`
		Currency   string `json:"currency"`
		AboveMinor int64  `json:"above_minor"`
	}
	r := c.must(0, "-o", "json", "config", "get")
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Key != "corrections.four_eyes_above.BHD" || got[0].AboveMinor != 1_000_000 ||
		got[1].Key != "corrections.four_eyes_above.JPY" || got[1].Value != "1000" || got[1].AboveMinor != 1000 ||
		got[2].Value != "1000.00" || got[2].AboveMinor != 100_000 {
		t.Fatalf("config get: %+v", got)
	}
	for _, bad := range [][2]string{{"JPY", "1000.5"}, {"USD", "-1"}, {"USD", "1,000"}, {"XYZ", "1"}, {"", "1"}} {
		if r := c.run("config", "set", "corrections.four_eyes_above."+bad[0], bad[1]); r.code == 0 {
			t.Errorf("config set of %s %q was accepted", bad[0], bad[1])
		}
	}
	if r := c.run("config", "set", "corrections.four_eyes_above_minor", "100"); r.code == 0 ||
		!strings.Contains(r.stderr, "corrections.four_eyes_above.USD") {
		t.Fatalf("the retired key:\n%v", r)
	}
	if r := approverCLI(c, "alice").run("config", "set", "corrections.four_eyes_above.USD", "1000000"); r.code != 1 ||
		!strings.Contains(r.stderr, "admin") {
		t.Fatalf("an approver raised its own threshold:\n%v", r)
	}
}

// The exponents the database converts thresholds with are internal/money's.
func TestCurrencyExponentsInTheDatabaseAreMoneys(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	rows, err := c.pool.Query(context.Background(), `SELECT currency, exponent FROM currency_exponents ORDER BY currency`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var code string
		var exp int
		if err := rows.Scan(&code, &exp); err != nil {
			t.Fatal(err)
		}
		cur, err := money.LookupCurrency(code)
		if err != nil || cur.Exponent != exp {
			t.Errorf("%s: the database says exponent %d, internal/money %d (%v)", code, exp, cur.Exponent, err)
		}
		n++
	}
	if n < 150 {
		t.Fatalf("only %d currencies in currency_exponents", n)
	}
}

// Straight to the database, as an approver login with plain SQL: it cannot
// change a proposal, forge a decision or a proposal, write postings or
// legs, post an unapproved correction, or approve twice.
// citusForm reports whether err is, on a Citus cluster, the form Citus
// gives the corrections check's check_violation (want 23514) when the
// statement is an INSERT ... SELECT: SQLSTATE XX000, internal_error, with
// the check's own message.
func citusForm(t *testing.T, err error, want string) bool {
	var pgErr *pgconn.PgError
	return want == pgerrcode.CheckViolation && pgtest.Citus(t) && errors.As(err, &pgErr) &&
		pgErr.Code == pgerrcode.InternalError && strings.HasPrefix(pgErr.Message, "clearing: ") &&
		(strings.Contains(pgErr.Message, "does not match statement line") || strings.Contains(pgErr.Message, "is not a proposal"))
}

func TestApproverCannotMoveMoneyWithPlainSQL(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	p := plant(t, c)
	p.importInto(c)
	from, to := p.period()
	c.reconcile(3, from, to)
	missing := byClass(c.corrections(), "missing_in_ledger")
	ctx := context.Background()
	snapshot := func() string {
		return c.rows(`SELECT id, status, amount_minor, currency, direction, counter_account, settlement_account
		                 FROM corrections WHERE tenant_id = $1 ORDER BY id`, c.tenant) +
			fmt.Sprint(c.postings(), c.count(`SELECT count(*) FROM legs WHERE tenant_id = $1`, c.tenant),
				c.count(`SELECT count(*) FROM correction_decisions WHERE tenant_id = $1`, c.tenant))
	}
	before := snapshot()
	appr := mustPool(t, approverCLI(c, "mallory").url)
	reader := mustPool(t, loginURL(c, "reader", "rita"))
	ingest := mustPool(t, loginURL(c, "ingest", "ivan"))
	code := func(err error) string {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			return pgErr.Code
		}
		return fmt.Sprint(err)
	}
	id := missing.ID
	for _, tc := range []struct {
		pool *pgxpool.Pool
		sql  string
		args []any
		want string
	}{
		{appr, `UPDATE corrections SET amount_minor = 500000000, counter_account = 'mallory' WHERE tenant_id = $1 AND id = $2`, []any{c.tenant, id}, "42501"},
		{appr, `DELETE FROM corrections WHERE tenant_id = $1 AND id = $2`, []any{c.tenant, id}, "42501"},
		{appr, `INSERT INTO correction_decisions (tenant_id, correction_id, decision, operator, reason, login, person)
		        VALUES ($1, $2, 'approve', 'bob', 'forged', 'bob', 'bob')`, []any{c.tenant, id}, "42501"},
		{appr, `INSERT INTO postings (tenant_id, posting_key, kind, source, value_date, amount_minor, currency, direction, account, digest)
		        VALUES ($1, 'forged', 'correction', 'ach', '2026-11-30', 500000000, 'USD', 'C', 'mallory', '\x00')`, []any{c.tenant}, "42501"},
		{appr, `INSERT INTO legs (tenant_id, posting_id, leg_no, account, direction, amount_minor, currency, value_date)
		        VALUES ($1, 1, 9, 'mallory', 'C', 1, 'USD', '2026-11-30'), ($1, 1, 10, 'settlement:ach', 'D', 1, 'USD', '2026-11-30')`, []any{c.tenant}, "42501"},
		// A proposal is checked against its statement line: not another
		// amount, not born approved. (On Citus the check's error in an
		// INSERT ... SELECT arrives as XX000 with the check's message:
		// citusForm.)
		{appr, `INSERT INTO corrections (tenant_id, correction_key, posting_key, class, source, reference, line_id, amount_minor,
		                                 currency, direction, counter_account, settlement_account, value_date, explanation, proposed_by_run)
		        SELECT tenant_id, correction_key || ':x', posting_key, class, source, reference, line_id, amount_minor * 100, currency,
		               direction, counter_account, settlement_account, value_date, explanation, proposed_by_run
		          FROM corrections WHERE tenant_id = $1 AND id = $2`, []any{c.tenant, id}, "23514"},
		{appr, `INSERT INTO corrections (tenant_id, correction_key, posting_key, class, status, source, reference, line_id, amount_minor,
		                                 currency, direction, counter_account, settlement_account, value_date, explanation, proposed_by_run)
		        SELECT tenant_id, 'forged', posting_key, class, 'approved', source, reference, line_id, amount_minor, currency,
		               direction, counter_account, settlement_account, value_date, explanation, proposed_by_run
		          FROM corrections WHERE tenant_id = $1 AND id = $2`, []any{c.tenant, id}, "23514"},
		// Posting before anyone approved.
		{appr, `SELECT clearing_post_correction($1, $2)`, []any{c.tenant, id}, "CA005"},
		// A name that is nothing once normalised, and one too long.
		{appr, `SELECT * FROM clearing_approve($1, $2, E' \u200b ', 'x')`, []any{c.tenant, id}, "22023"},
		{appr, `SELECT * FROM clearing_approve($1, $2, repeat('a', 201), 'x')`, []any{c.tenant, id}, "22023"},
		{reader, `SELECT * FROM clearing_approve($1, $2, 'rita', 'x')`, []any{c.tenant, id}, "42501"},
		{ingest, `SELECT * FROM clearing_approve($1, $2, 'ivan', 'x')`, []any{c.tenant, id}, "42501"},
		{ingest, `UPDATE corrections SET status = 'posted' WHERE tenant_id = $1`, []any{c.tenant}, "42501"},
		{reader, `INSERT INTO correction_decisions (tenant_id, correction_id, decision, operator, reason) VALUES ($1, $2, 'approve', 'x', 'y')`, []any{c.tenant, id}, "42501"},
	} {
		_, err := tc.pool.Exec(ctx, tc.sql, tc.args...)
		if got := code(err); got != tc.want && !citusForm(t, err, tc.want) {
			t.Errorf("%s: %v, want SQLSTATE %s", strings.Join(strings.Fields(tc.sql), " "), err, tc.want)
		}
	}
	// A login that can create roles could make itself a second approver
	// login: it is not an approver.
	minter := mustPool(t, loginURL(c, "approver", "minter"))
	if _, err := c.pool.Exec(ctx, "ALTER ROLE "+loginOf(c, "minter")+" CREATEROLE"); err != nil {
		t.Fatal(err)
	}
	if _, err := minter.Exec(ctx, `SELECT * FROM clearing_approve($1, $2, 'minter', 'x')`, c.tenant, id); code(err) != "42501" {
		t.Errorf("an approver login with CREATEROLE: %v, want 42501", err)
	}
	if after := snapshot(); after != before {
		t.Fatalf("plain SQL changed the money:\nbefore %s\nafter  %s", before, after)
	}

	// The approver's own approval through the function, twice: the second
	// is refused by the database.
	c.must(0, "config", "set", "corrections.four_eyes_above.USD", "1")
	if _, err := appr.Exec(ctx, `SELECT * FROM clearing_approve($1, $2, 'mallory', 'checked')`, c.tenant, id); err != nil {
		t.Fatal(err)
	}
	if _, err := appr.Exec(ctx, `SELECT * FROM clearing_approve($1, $2, 'Mallory2', 'checked')`, c.tenant, id); code(err) != "CA003" {
		t.Fatalf("a second approval by the same login: %v, want CA003", err)
	}
	if _, err := appr.Exec(ctx, `SELECT clearing_post_correction($1, $2)`, c.tenant, id); code(err) != "CA005" {
		t.Fatalf("posting after one approval of two: %v, want CA005", err)
	}
	// Even the owner, writing the table directly, cannot add a second row
	// for one login: the unique index refuses it.
	_, err := c.pool.Exec(ctx, `
INSERT INTO correction_decisions (tenant_id, correction_id, decision, operator, reason, db_role, login, person)
VALUES ($1, $2, 'approve', 'someone else', 'direct', $3, $3, 'someone else')`, c.tenant, id, loginOf(c, "mallory"))
	if code(err) != "23505" {
		t.Fatalf("a second decision row for one login: %v, want a unique violation", err)
	}
	if ds := c.decisions(id); len(ds) != 1 || ds[0].login != loginOf(c, "mallory") {
		t.Fatalf("decisions: %+v", ds)
	}
	if status, postings, _ := c.correctionState(missing); status != "approved" || postings != 0 {
		t.Fatalf("%s with %d postings after one login's approvals", status, postings)
	}
}

// An operator sees what an approval is about: the money, the break it
// corrects, who approved and what is still needed; a refusal says why in
// words.
func TestOperatorsSeeTheMoneyTheBreakAndWhoApproved(t *testing.T) {
	t.Parallel()
	c := newCLI(t)
	p := plant(t, c)
	p.importInto(c)
	from, to := p.period()
	c.reconcile(3, from, to)
	missing := byClass(c.corrections(), "missing_in_ledger")
	c.must(0, "config", "set", "corrections.four_eyes_above.USD", "1")
	id := fmt.Sprint(missing.ID)
	alice, bob := approverCLI(c, "alice"), approverCLI(c, "bob")

	type approvalJSON struct {
		Status     string `json:"status"`
		Amount     int64  `json:"amount"`
		Currency   string `json:"currency"`
		Approvals  int    `json:"approvals"`
		Needed     int    `json:"needed"`
		ApprovedBy []struct {
			Operator string `json:"operator"`
			Login    string `json:"login"`
		} `json:"approved_by"`
		Break *struct {
			Status string `json:"status"`
		} `json:"break"`
		Note string `json:"note"`
	}
	approve := func(as *cli, want int, name string) approvalJSON {
		t.Helper()
		r := as.must(want, "-o", "json", "corrections", "approve", id, "--operator", name, "--reason", "checked with the bank")
		var out []approvalJSON
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || len(out) != 1 {
			t.Fatalf("approve: %v\n%v", err, r)
		}
		return out[0]
	}

	first := approve(alice, 0, "Alice Smith")
	if first.Status != "approved" || first.Amount != missing.Amount || first.Currency != "USD" || first.Approvals != 1 ||
		first.Needed != 2 || len(first.ApprovedBy) != 1 || first.ApprovedBy[0].Operator != "Alice Smith" ||
		first.ApprovedBy[0].Login != loginOf(c, "alice") {
		t.Fatalf("the first approval: %+v", first)
	}
	if first.Break == nil || first.Break.Status != "open" {
		t.Fatalf("the first approval names no open break: %+v", first)
	}
	again := approve(alice, 1, "Alice Smith")
	if again.Status != "refused" || again.Approvals != 1 || again.Needed != 2 ||
		again.Note != loginOf(c, "alice")+" already approved; a second person must approve, from another login" {
		t.Fatalf("the same login again: %+v", again)
	}
	text := alice.must(1, "corrections", "approve", id, "--operator", "Alice Smith", "--reason", "again")
	if !strings.Contains(text.stdout, "1 of 2: Alice Smith (login "+loginOf(c, "alice")+")") || strings.Contains(text.stdout, "0 of 0") ||
		!strings.Contains(text.stdout, money.FormatCode(missing.Amount, "USD")) {
		t.Fatalf("the refusal as a table:\n%v", text)
	}
	if ds := c.decisions(missing.ID); len(ds) != 1 {
		t.Fatalf("decisions after the refusal: %+v, want alice's alone", ds)
	}

	// The correction names the break of the inventory it corrects.
	var breakID int64
	if err := c.pool.QueryRow(context.Background(), `
SELECT id FROM breaks WHERE tenant_id = $1 AND class = 'missing_in_ledger' AND item_key || ':correction:missing_in_ledger' = $2`,
		c.tenant, missing.Key).Scan(&breakID); err != nil {
		t.Fatal(err)
	}
	var listed []struct {
		ID         int64 `json:"id"`
		Approvals  int   `json:"approvals"`
		Needed     int   `json:"needed"`
		ApprovedBy []struct {
			Operator string `json:"operator"`
		} `json:"approved_by"`
		Break *struct {
			ID     int64  `json:"id"`
			Status string `json:"status"`
		} `json:"break"`
	}
	r := c.must(0, "-o", "json", "corrections", "list")
	if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, l := range listed {
		if l.ID != missing.ID {
			continue
		}
		found = true
		if l.Approvals != 1 || l.Needed != 2 || len(l.ApprovedBy) != 1 || l.Break == nil || l.Break.ID != breakID || l.Break.Status != "open" {
			t.Fatalf("listed: %+v (break %+v), want 1 of 2 and break %d open", l, l.Break, breakID)
		}
	}
	if !found {
		t.Fatalf("correction %d not listed:\n%s", missing.ID, r.stdout)
	}
	show := c.must(0, "corrections", "show", id)
	for _, want := range []string{fmt.Sprintf("%d (open, 0 days)", breakID), "1 of 2: Alice Smith"} {
		if !strings.Contains(show.stdout, want) {
			t.Fatalf("corrections show lacks %q:\n%s", want, show.stdout)
		}
	}

	last := approve(bob, 0, "Bob")
	if last.Status != "posted" || last.Approvals != 2 || len(last.ApprovedBy) != 2 || last.ApprovedBy[1].Operator != "Bob" {
		t.Fatalf("the second approval: %+v", last)
	}
	if status, postings, legs := c.correctionState(missing); status != "posted" || postings != 1 || legs != 2 {
		t.Fatalf("after two operators: %s, %d postings, %d legs", status, postings, legs)
	}
}
