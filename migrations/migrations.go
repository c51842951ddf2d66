// Package migrations embeds the numbered SQL migrations that build the
// clearing schema. They are applied by internal/db.
package migrations

import "embed"

// FS holds every migration file.
//
//go:embed *.sql
var FS embed.FS
