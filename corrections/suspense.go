package corrections

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/clearing-dev/clearing/internal/ledger"
)

// ClassQuarantined is the class of a correction that posts a held return
// or reversal against a suspense account.
const ClassQuarantined = "quarantined"

// SuspenseProposal is what proposing to post one held record against
// suspense did.
type SuspenseProposal struct {
	RunID        int64  `json:"run_id"`
	CorrectionID int64  `json:"correction_id"`
	Key          string `json:"key"`
	Digest       string `json:"digest"`
	// Outcome is proposed, already_proposed, already_released,
	// already_dismissed, already_posted_to_suspense, or not_a_return for a
	// held record of another kind (which an operator releases or
	// dismisses).
	Outcome string `json:"outcome"`
}

// ProposeSuspense proposes, for each open held return or reversal under key
// that finds no single original, a correction of class quarantined that
// posts it under its own key against account (suspense:<source> when
// empty), with reason. Approvers decide on it as on every correction (four
// eyes above the currency's threshold); its final approval posts it and
// closes the held record as posted_to_suspense in one transaction
// (clearing_quarantine_suspense and clearing_post_correction, migration
// 00019). The login that proposes must be an approver.
func ProposeSuspense(ctx context.Context, q ledger.Querier, tenant, key, reason, account string) ([]SuspenseProposal, error) {
	rows, err := q.Query(ctx, `SELECT run_id, coalesce(correction_id, 0), record_key, digest, outcome
  FROM clearing_quarantine_suspense($1, $2, $3, $4)`, tenant, key, reason, account)
	if err != nil {
		return nil, suspenseErr(key, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (SuspenseProposal, error) {
		var p SuspenseProposal
		var digest []byte
		err := row.Scan(&p.RunID, &p.CorrectionID, &p.Key, &digest, &p.Outcome)
		p.Digest = hex.EncodeToString(digest)
		return p, err
	})
	if err != nil {
		return nil, suspenseErr(key, err)
	}
	return out, nil
}

func suspenseErr(key string, err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		msg := strings.TrimPrefix(pgErr.Message, "clearing: ")
		switch pgErr.Code {
		case pgerrcode.InsufficientPrivilege:
			return fmt.Errorf("%w: %s", ErrNotPermitted, msg)
		case pgerrcode.InvalidParameterValue:
			return fmt.Errorf("%w: %s", ErrInvalidDecision, msg)
		case "CA010":
			return fmt.Errorf("%w: %s", ledger.ErrNotHeld, key)
		}
	}
	return fmt.Errorf("corrections: post %s against suspense: %w", key, err)
}
