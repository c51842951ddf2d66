package ingest

import "github.com/clearing-dev/clearing/internal/stage"

// ErrRejected means a file was refused whole: nothing from it was posted or
// imported, and only its rejected run records it. It is the intake's error,
// for ledger files and statements alike, so that callers branch on it here,
// in the package they call, and not in internal/stage where it is raised.
var ErrRejected = stage.ErrRejected

// RejectedError lists what was wrong with a rejected file, one error per
// bad record up to a limit; errors.Is(err, ErrRejected) holds for it.
type RejectedError = stage.RejectedError
