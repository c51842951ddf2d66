package ledger

import (
	"context"
	"fmt"

	"github.com/clearing-dev/clearing/internal/db"
)

// The ledger's statements run inside routines (db.Routine): SECURITY
// DEFINER functions owned by the schema's owner, each for a running run of
// the calling login. A routine writes postings of the kinds its statement
// names and legs only for the postings it has just inserted: neither a
// posting of kind correction nor a leg added to an existing posting can be
// written this way. The reads of a chunk's transaction are routines too
// (lockSource, findOriginals, the holds' checks), so that the transaction
// reaches the tenant's tables as one role (db.Routine).
var (
	lockSource      = db.Routine{Name: "clearing_lock_source", Args: "text, bigint, text, boolean", Returns: "void", Body: lockSourceStatement}
	holdShifted     = db.Routine{Name: "clearing_hold_shifted", Args: "text, bigint, bigint, bigint, bigint", Returns: "boolean", Body: holdShiftedStatement}
	resendMatches   = db.Routine{Name: "clearing_resend_matches", Args: "text, bigint, text, bigint, bigint, bigint", Returns: "TABLE (n bigint, matched bigint)", Body: resendMatchesStatement}
	holdResent      = db.Routine{Name: "clearing_hold_resent", Args: "text, bigint, bigint", Returns: "void", Body: holdResentStatement}
	settleLate      = db.Routine{Name: "clearing_settle_late", Args: "text, bigint, text, bigint, bigint", Returns: "boolean", Body: settleLateStatement}
	postClearing    = db.Routine{Name: "clearing_post_clearing", Args: "text, bigint, bigint, bigint, text", Returns: "SETOF bigint", Body: insertClearing}
	postNewClearing = db.Routine{Name: "clearing_post_new_clearing", Args: "text, bigint, bigint, bigint, text", Returns: "SETOF bigint", Body: insertNewClearing}
	postNotices     = db.Routine{Name: "clearing_post_notices", Args: "text, bigint, bigint, bigint, text", Returns: "SETOF bigint", Body: insertNotices}
	findOriginals   = db.Routine{Name: "clearing_find_originals", Args: "text, bigint, bigint, bigint, integer", Returns: "void", Body: resolveLinks}
	postLinked      = db.Routine{Name: "clearing_post_linked", Args: "text, bigint, bigint, bigint, text, integer", Returns: "SETOF bigint", Body: insertLinked}
	postReclass     = db.Routine{Name: "clearing_post_reclass", Args: "text, bigint, bigint, bigint, text", Returns: "void", Body: insertReclass}
	auditStaged     = db.Routine{Name: "clearing_audit_postings", Args: "text, bigint, bigint, bigint", Returns: "TABLE (verdict text, n bigint)", Body: auditPostings}
	auditNotice     = db.Routine{Name: "clearing_audit_notices", Args: "text, bigint, bigint, bigint", Returns: "TABLE (verdict text, n bigint)", Body: auditNotices}
)

// Routines are the ledger's routines, which `clearing migrate` installs.
var Routines = []db.Routine{lockSource, holdShifted, resendMatches, holdResent, settleLate, postClearing, postNewClearing, postNotices,
	findOriginals, postLinked, postReclass, auditStaged, auditNotice,
	holdQuarantine, releaseLinked, releaseKeys, closeHeld, markHeld, heldState, settleSuspense}

// checkRoutines is the check of ledger verify that every routine of rs is
// installed as this binary would install it.
func checkRoutines(ctx context.Context, q Querier, rs []db.Routine) (Check, error) {
	c := Check{Name: "the ledger's routines are the ones this clearing installs"}
	found, err := db.CheckRoutines(ctx, q, rs)
	if err != nil {
		return c, fmt.Errorf("ledger: verify: %w", err)
	}
	for _, f := range found {
		c.found("", f.Name, f.Problem)
	}
	return c, nil
}
