// Package csv reads CSV settlement exports into formats.Records, driven by a
// TOML mapping that names the export's columns. One package serves every
// processor and bank whose export is a table: the mapping says which column
// holds the key, the amount (one signed column, a debit and a credit column,
// or an amount and a direction column), the currency, the value date and the
// counterparty account, and which rows are not records at all.
//
// Rows are read with this package's own RFC 4180 scanner rather than
// encoding/csv, because each row must carry the byte offset of its first
// line and memory must stay bounded when a quoted field runs across lines;
// docs/decisions/csv-own-reader.md gives the measurements.
//
// The mapping keys, the natural key format and the presets are documented in
// docs/formats/csv.md.
package csv
