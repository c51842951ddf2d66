// Package ach reads NACHA ACH files into formats.Records and writes
// deterministic ACH files for tests, demonstrations and benchmarks.
//
// The Reader streams: it parses one 94-character record at a time with the
// record types of github.com/moov-io/ach, checks the file's structure and
// its batch and file control totals as it goes, and holds no more than one
// batch header and one entry with its addenda. Each entry becomes one
// Record: forward entries are Clearing records (or Notices for prenotes and
// zero-dollar entries), addenda 99 returns and their dishonored and
// contested follow-ups are Return records linked to their originals, and
// notifications of change are Notices. Keys follow DESIGN §4:
// "ach:<company identification>:<effective entry date>:<trace number>".
//
// The writers (WriteEntries, WriteReturns, WriteNotices, WriteIAT,
// WriteAdvices) and GenerateEntries make valid files from a seed, streaming
// as well.
//
// docs/formats/ach.md documents the mapping, the checks and the limits.
package ach
