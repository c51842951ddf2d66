package corrections

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clearing-dev/clearing/internal/failpoint"
	"github.com/clearing-dev/clearing/internal/ledger"
)

// Correction is a proposed (or decided) correction.
type Correction struct {
	ID                int64      `json:"id"`
	Key               string     `json:"key"`
	PostingKey        string     `json:"posting_key"`
	Class             string     `json:"class"`
	Status            string     `json:"status"`
	Source            string     `json:"source"`
	Reference         string     `json:"reference"`
	Amount            int64      `json:"amount"`
	Currency          string     `json:"currency"`
	Direction         string     `json:"direction"`
	CounterAccount    string     `json:"counter_account"`
	SettlementAccount string     `json:"settlement_account"`
	ValueDate         time.Time  `json:"value_date"`
	Explanation       string     `json:"explanation"`
	ProposedByRun     int64      `json:"proposed_by_run"`
	CreatedAt         time.Time  `json:"created_at"`
	Approvals         int        `json:"approvals"`
	Needed            int        `json:"needed"`
	ApprovedBy        []Approver `json:"approved_by"`
	Break             *BreakRef  `json:"break"`
	Decisions         []Decision `json:"decisions,omitempty"`

	refersTo *int64
	lineID   *int64
}

// Approver is a person whose approval of a correction counts, and the
// database login it was made from.
type Approver struct {
	Operator string `json:"operator"`
	Login    string `json:"login"`
}

func (a Approver) String() string {
	if a.Operator == a.Login {
		return a.Login
	}
	return a.Operator + " (login " + a.Login + ")"
}

// BreakRef is the break of the inventory that a correction corrects
// (reconcile's breaks: the same source, class and item key).
type BreakRef struct {
	ID      int64  `json:"id"`
	ItemKey string `json:"item_key"`
	Status  string `json:"status"`
	AgeDays int    `json:"age_days"`
}

// Decision is one operator's approval or rejection. Login is the database
// login that made it, recorded by the database; it is empty for decisions
// recorded before logins were (they never count towards four eyes).
type Decision struct {
	Decision string    `json:"decision"`
	Operator string    `json:"operator"`
	Reason   string    `json:"reason"`
	DBRole   string    `json:"db_role"`
	Login    string    `json:"login"`
	At       time.Time `json:"at"`
}

// selectCorrections reads corrections with the approvals made on them and
// the break each corrects. Which approvals count (those of logins that are
// approvers still) and how many a correction needs are asked of the
// database's own functions afterwards (countApprovals): on a distributed
// schema a query on a shard may not call a function that reads the tables.
const selectCorrections = `
SELECT c.id, c.correction_key, c.posting_key, c.class, c.status, c.source, c.reference, c.amount_minor, c.currency,
       c.direction, c.counter_account, c.settlement_account, c.value_date, c.explanation, c.proposed_by_run,
       c.created_at, c.refers_to, c.line_id, coalesce(a.approvers, '{}'), coalesce(a.logins, '{}'),
       b.id, b.item_key, b.status, b.age_days
  FROM corrections c
  LEFT JOIN LATERAL (
       -- One approval per person, as clearing_approvals_counted counts them.
       SELECT array_agg(x.operator ORDER BY x.first) AS approvers, array_agg(x.login ORDER BY x.first) AS logins
         FROM (SELECT DISTINCT ON (d.person) d.person, d.login, d.operator, d.id AS first
                 FROM correction_decisions d
                WHERE d.tenant_id = $1 AND d.correction_id = c.id AND d.decision = 'approve'
                  AND d.login IS NOT NULL AND d.person IS NOT NULL
                ORDER BY d.person, d.id) x) a ON true
  LEFT JOIN LATERAL (
       SELECT k.id, k.item_key, k.status, (current_date - k.first_seen::date) AS age_days
         FROM breaks k
        WHERE k.tenant_id = $1 AND k.source = c.source AND k.class = c.class
          AND k.item_key = left(c.correction_key, -length(':correction:' || c.class))) b ON true`

func scanCorrection(row pgx.CollectableRow) (Correction, error) {
	var c Correction
	var operators, logins []string
	var breakID *int64
	var breakKey, breakStatus *string
	var breakAge *int32
	err := row.Scan(&c.ID, &c.Key, &c.PostingKey, &c.Class, &c.Status, &c.Source, &c.Reference, &c.Amount,
		&c.Currency, &c.Direction, &c.CounterAccount, &c.SettlementAccount, &c.ValueDate, &c.Explanation,
		&c.ProposedByRun, &c.CreatedAt, &c.refersTo, &c.lineID, &operators, &logins,
		&breakID, &breakKey, &breakStatus, &breakAge)
	if err != nil {
		return c, err
	}
	c.ApprovedBy = make([]Approver, len(operators))
	for i := range operators {
		c.ApprovedBy[i] = Approver{Operator: operators[i], Login: logins[i]}
	}
	if breakID != nil {
		c.Break = &BreakRef{ID: *breakID, ItemKey: *breakKey, Status: *breakStatus, AgeDays: int(*breakAge)}
	}
	return c, nil
}

// queryCorrections reads the corrections of tenant that where selects, in
// its order, and counts their approvals.
func queryCorrections(ctx context.Context, q ledger.Querier, tenant, where string, args ...any) ([]Correction, error) {
	rows, err := q.Query(ctx, selectCorrections+where, append([]any{tenant}, args...)...)
	if err != nil {
		return nil, err
	}
	cs, err := pgx.CollectRows(rows, scanCorrection)
	if err != nil {
		return nil, err
	}
	return cs, countApprovals(ctx, q, tenant, cs)
}

// countApprovals keeps, of each correction's approvals, those that
// clearing_approvals_counted counts (by a login that is an approver still),
// and says how many it needs (clearing_approvals_needed): the database's
// own rules, asked once for all of cs.
func countApprovals(ctx context.Context, q ledger.Querier, tenant string, cs []Correction) error {
	if len(cs) == 0 {
		return nil
	}
	currencies, amounts, logins := make([]string, len(cs)), make([]int64, len(cs)), []string{}
	for i, c := range cs {
		currencies[i], amounts[i] = c.Currency, c.Amount
		for _, a := range c.ApprovedBy {
			logins = append(logins, a.Login)
		}
	}
	rows, err := q.Query(ctx, `
SELECT clearing_approvals_needed($1, x.currency, x.amount) FROM unnest($2::text[], $3::bigint[]) WITH ORDINALITY x(currency, amount, i)
 ORDER BY x.i`, tenant, currencies, amounts)
	if err != nil {
		return err
	}
	needed, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return err
	}
	rows, err = q.Query(ctx, `SELECT l FROM unnest($1::text[]) l WHERE clearing_is_approver(l)`, logins)
	if err != nil {
		return err
	}
	approvers, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for i := range cs {
		cs[i].Needed = int(needed[i])
		kept := []Approver{}
		for _, a := range cs[i].ApprovedBy {
			if slices.Contains(approvers, a.Login) {
				kept = append(kept, a)
			}
		}
		cs[i].ApprovedBy, cs[i].Approvals = kept, len(kept)
	}
	return nil
}

// ApprovalState says in words how far the approval of c has come: who
// approved, and what it still needs.
func (c Correction) ApprovalState() string {
	if c.Needed == 0 {
		return "-"
	}
	who := make([]string, len(c.ApprovedBy))
	for i, a := range c.ApprovedBy {
		who[i] = a.String()
	}
	have := fmt.Sprintf("%d of %d", c.Approvals, c.Needed)
	if len(who) > 0 {
		have += ": " + strings.Join(who, ", ")
	}
	return have
}

// List returns corrections, newest first, optionally only those of one
// status or proposed by one reconciliation run.
func List(ctx context.Context, q ledger.Querier, tenant, status string, run int64) ([]Correction, error) {
	out, err := queryCorrections(ctx, q, tenant, `
 WHERE c.tenant_id = $1 AND ($2 = '' OR c.status = $2) AND ($3 = 0 OR c.proposed_by_run = $3)
 ORDER BY c.id DESC`, status, run)
	if err != nil {
		return nil, fmt.Errorf("corrections: list corrections: %w", err)
	}
	if out == nil {
		out = []Correction{}
	}
	return out, nil
}

// Get returns one correction with its decisions.
func Get(ctx context.Context, q ledger.Querier, tenant string, id int64) (Correction, error) {
	c, err := getCorrection(ctx, q, tenant, id)
	if err != nil {
		return c, err
	}
	rows, err := q.Query(ctx, `
SELECT decision, operator, reason, db_role, coalesce(login, ''), decided_at FROM correction_decisions
 WHERE tenant_id = $1 AND correction_id = $2 ORDER BY id`, tenant, id)
	if err != nil {
		return c, fmt.Errorf("corrections: decisions of correction %d: %w", id, err)
	}
	c.Decisions, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (Decision, error) {
		var d Decision
		err := row.Scan(&d.Decision, &d.Operator, &d.Reason, &d.DBRole, &d.Login, &d.At)
		return d, err
	})
	return c, err
}

func getCorrection(ctx context.Context, q ledger.Querier, tenant string, id int64) (Correction, error) {
	cs, err := queryCorrections(ctx, q, tenant, ` WHERE c.tenant_id = $1 AND c.id = $2`, id)
	if err != nil {
		return Correction{}, fmt.Errorf("corrections: correction %d: %w", id, err)
	}
	if len(cs) == 0 {
		return Correction{}, fmt.Errorf("%w: %d", ErrCorrectionNotFound, id)
	}
	return cs[0], nil
}

// OfKey returns, oldest first, every correction whose key derives from key
// (key followed by ':') or that posts under key, for `clearing lookup`.
func OfKey(ctx context.Context, q ledger.Querier, tenant, key string) ([]Correction, error) {
	out, err := queryCorrections(ctx, q, tenant, `
 WHERE c.tenant_id = $1 AND (c.posting_key = $2 OR (c.correction_key > $2 || ':' AND c.correction_key < $2 || ';'))
 ORDER BY c.id`, key)
	if err != nil {
		return nil, fmt.Errorf("corrections: corrections of %q: %w", key, err)
	}
	return out, nil
}

// Approval is what one approval did, or why it was refused.
type Approval struct {
	ID         int64      `json:"id"`
	Key        string     `json:"key"`
	Status     string     `json:"status"` // approved (waiting for another login), posted, refused
	Amount     int64      `json:"amount"`
	Currency   string     `json:"currency"`
	Approvals  int        `json:"approvals"`
	Needed     int        `json:"needed"`
	ApprovedBy []Approver `json:"approved_by"`
	Break      *BreakRef  `json:"break"`
	PostingKey string     `json:"posting_key,omitempty"`
	Note       string     `json:"note"`
}

// State says in words how far the approval has come (see
// Correction.ApprovalState).
func (a Approval) State() string {
	return Correction{Approvals: a.Approvals, Needed: a.Needed, ApprovedBy: a.ApprovedBy}.ApprovalState()
}

func (a *Approval) from(c Correction) {
	a.ID, a.Key, a.Amount, a.Currency = c.ID, c.Key, c.Amount, c.Currency
	a.Approvals, a.Needed, a.ApprovedBy, a.Break = c.Approvals, c.Needed, c.ApprovedBy, c.Break
}

// Approve records the approval of correction id by the connection's login,
// with operator (the person's name) and reason, and when it is the last
// approval needed posts the correction in the same transaction. The
// database does both (clearing_approve_correction, migration 00023, and
// clearing_post_correction): it takes the source's ledger lock, refuses a
// correction whose break is gone (ErrStale), records the login itself,
// refuses a second approval by the same login or by the same person under
// another login, never counts the owner of the schema, and reads the
// four-eyes threshold of the correction's currency from config, so no flag
// can change any of it. Approving a posted correction again posts nothing;
// approvals of one source are serialised on its ledger lock, and the
// ledger's unique key would refuse a second posting anyway.
//
// Within the transaction the connection only calls the owner's routines,
// which do every read and write, as a distributed schema requires (Citus
// refuses a transaction that touches a tenant's shards as two users). What
// the approval did is read once the transaction has ended.
func Approve(ctx context.Context, pool *pgxpool.Pool, tenant string, id int64, operator, reason string) (Approval, error) {
	var a Approval
	var postedNow bool
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var status string
		if err := tx.QueryRow(ctx, `SELECT status, approvals, needed FROM clearing_approve_correction($1, $2, $3, $4)`,
			tenant, id, operator, reason).Scan(&status, &a.Approvals, &a.Needed); err != nil {
			return err
		}
		a.Status = status
		if status == "posted" || a.Approvals < a.Needed {
			return nil
		}
		if err := failpoint.Hit(failpoint.ApproveRecorded); err != nil {
			return err
		}
		if _, err := ledger.PostCorrection(ctx, tx, tenant, id); err != nil {
			if errors.Is(err, ledger.ErrKeyTaken) {
				return errKeyTaken
			}
			return err
		}
		postedNow = true
		return nil
	})
	err = decisionError(err)
	if errors.Is(err, errKeyTaken) {
		err = stale(ctx, pool, tenant, id)
	}
	if err != nil {
		return refused(ctx, pool, tenant, id, operator, err), err
	}
	status := a.Status
	c, err := Get(ctx, pool, tenant, id)
	if err != nil {
		return a, err
	}
	a.from(c)
	a.Status = status
	switch {
	case postedNow:
		a.Status, a.PostingKey, a.Note = "posted", c.PostingKey, "posted under "+c.PostingKey
	case status == "posted":
		a.PostingKey, a.Note = c.PostingKey, "already posted; nothing more to do"
	default:
		a.Note = fmt.Sprintf("%d more approval needed, by another person from another login, before it posts", a.Needed-a.Approvals)
	}
	return a, nil
}

// errKeyTaken is the ledger's refusal to post under a key it holds.
var errKeyTaken = errors.New("key taken")

// stale says why a correction whose posting key the ledger holds can no
// longer post.
func stale(ctx context.Context, pool *pgxpool.Pool, tenant string, id int64) error {
	c, err := getCorrection(ctx, pool, tenant, id)
	if err != nil {
		return err
	}
	if c.Class == ClassQuarantined {
		return fmt.Errorf("%w: the held record %s was released or dismissed since correction %d was proposed", ErrStale, c.PostingKey, c.ID)
	}
	return fmt.Errorf("%w: the ledger already holds %s, so the money this correction would post has arrived", ErrStale, c.PostingKey)
}

// refused is the Approval of a refused approval: the correction as it
// stands, and why in words.
func refused(ctx context.Context, pool *pgxpool.Pool, tenant string, id int64, operator string, err error) Approval {
	a := Approval{ID: id, Status: "refused", ApprovedBy: []Approver{}, Note: strings.TrimPrefix(err.Error(), "corrections: ")}
	c, gerr := Get(ctx, pool, tenant, id)
	if gerr != nil {
		return a
	}
	a.from(c)
	switch {
	case errors.Is(err, ErrSamePerson):
		a.Note = fmt.Sprintf("%s already approved, from another login; a second person must approve", strings.TrimSpace(operator))
	case errors.Is(err, ErrSameOperator):
		var login string
		if pool.QueryRow(ctx, `SELECT session_user`).Scan(&login) == nil {
			a.Note = fmt.Sprintf("%s already approved; a second person must approve, from another login", login)
		}
	case errors.Is(err, ErrRejectedCorrection):
		for _, d := range c.Decisions {
			if d.Decision == "reject" {
				a.Note = fmt.Sprintf("rejected by %s on %s (%s); rejection is final", d.Operator, d.At.Format("2006-01-02"), d.Reason)
			}
		}
	}
	return a
}

// Reject records the rejection of correction id by the connection's login
// (clearing_reject, migration 00007). Rejection is final; a posted
// correction cannot be rejected (a new correction undoes it).
func Reject(ctx context.Context, pool *pgxpool.Pool, tenant string, id int64, operator, reason string) (Correction, error) {
	if _, err := pool.Exec(ctx, `SELECT clearing_reject($1, $2, $3, $4)`, tenant, id, operator, reason); err != nil {
		return Correction{}, decisionError(err)
	}
	return Get(ctx, pool, tenant, id)
}

// decisionError turns the database's refusal of a decision into the
// sentinel error callers branch on, keeping the database's explanation.
func decisionError(err error) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return err
	}
	var sentinel error
	switch pgErr.Code {
	case pgerrcode.InsufficientPrivilege:
		sentinel = ErrNotPermitted
	case pgerrcode.InvalidParameterValue:
		sentinel = ErrInvalidDecision
	case sqlstateNotFound:
		sentinel = ErrCorrectionNotFound
	case sqlstateRejected:
		sentinel = ErrRejectedCorrection
	case sqlstateSameLogin:
		sentinel = ErrSameOperator
	case sqlstateSamePerson:
		sentinel = ErrSamePerson
	case sqlstateNotApproved:
		sentinel = ErrNotApproved
	case sqlstatePosted:
		sentinel = ErrAlreadyPosted
	case sqlstateStale:
		sentinel = ErrStale
	default:
		return err
	}
	return fmt.Errorf("%w: %s", sentinel, strings.TrimPrefix(pgErr.Message, "clearing: "))
}
