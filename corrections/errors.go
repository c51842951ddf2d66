package corrections

import (
	"errors"
	"fmt"
)

// Sentinel errors of the correction workflow.
var (
	// ErrCorrectionNotFound means the tenant has no correction of that id.
	ErrCorrectionNotFound = errors.New("corrections: no such correction")
	// ErrRejectedCorrection means the correction was rejected; rejection
	// is final.
	ErrRejectedCorrection = errors.New("corrections: the correction was rejected")
	// ErrAlreadyPosted means a rejection came after the correction posted.
	ErrAlreadyPosted = errors.New("corrections: the correction is already posted")
	// ErrSameOperator means this login, or this person under another
	// login, already approved the correction, and a different operator (a
	// second login and a second person) is needed.
	ErrSameOperator = errors.New("corrections: four eyes: a different operator must approve")
	// ErrSamePerson is the ErrSameOperator of a person who approved
	// already under another login.
	ErrSamePerson = fmt.Errorf("%w: the same person approved under another login", ErrSameOperator)
	// ErrStale means the discrepancy the correction was proposed for no
	// longer exists.
	ErrStale = errors.New("corrections: the discrepancy no longer exists")
	// ErrNotPermitted means the connection's login may not decide on
	// corrections: it is not in clearing_approver, or it can act as the
	// owner of the schema, whose approval never counts.
	ErrNotPermitted = errors.New("corrections: this database role may not decide on corrections")
	// ErrInvalidDecision means the operator's name or the reason is empty
	// once normalised.
	ErrInvalidDecision = errors.New("corrections: a decision needs the operator's name and a reason")
	// ErrNotApproved means a correction was to post before enough
	// different logins and people approved it.
	ErrNotApproved = errors.New("corrections: four eyes: the correction is not approved by enough operators")
)

// The SQLSTATEs that the correction functions of migration 00007 raise.
const (
	sqlstateNotFound    = "CA001"
	sqlstateRejected    = "CA002"
	sqlstateSameLogin   = "CA003"
	sqlstateSamePerson  = "CA004"
	sqlstateNotApproved = "CA005"
	sqlstatePosted      = "CA007"
	sqlstateStale       = "CA008"
)
