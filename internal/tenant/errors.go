package tenant

import "errors"

// ErrInvalid means a string is not a tenant id.
var ErrInvalid = errors.New("tenant: invalid tenant id")
