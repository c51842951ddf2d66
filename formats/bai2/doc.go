// Package bai2 reads BAI2 bank statements (Cash Management Balance Reporting
// Specification, version 2) into statement-side formats.Records, and writes
// valid BAI2 files for tests and demonstrations.
//
// Every 16 transaction detail becomes one Record. Account summaries (03) are
// not statement lines; they reach the caller through Options.OnAccount once
// the account's trailer (49) has checked out. The reader streams: it holds one
// logical record (a physical record and its 88 continuations) at a time, so
// memory does not grow with the size of the file.
//
// Control totals and record counts in the 49, 98 and 99 trailers are checked
// as they arrive. A file that fails any check ends in a *FileError instead of
// io.EOF, so a caller that commits only on io.EOF never commits a statement
// whose totals do not bridge.
package bai2
