// Package camt reads ISO 20022 bank-to-customer cash management messages
// into statement-side formats.Records: camt.053 (statement), camt.052
// (account report) and camt.054 (debit/credit notification), versions
// 001.01 to 001.13, recognised by the document's namespace. It also writes
// deterministic camt.053 files for tests and demonstrations.
//
// The reader streams the XML with encoding/xml's token reader and decodes
// one Ntry at a time, so memory grows with the largest entry, not with the
// file. Every booked entry becomes one statement line, or, when it is a
// batch whose transaction details add up to it, a settlement total line
// beside one line per detail; charges included in an entry become fee lines
// carved out of it. See docs/formats/camt.md.
//
// Money problems (an unknown or XXX currency, an amount with more decimals
// than its currency has, an impossible date, an entry without a direction,
// a camt.053 statement without a closing balance, an unknown namespace)
// are *formats.ParseErrors and end in a *FileError. Metadata problems (a
// statement whose balances do not add up, a balance without a credit/debit
// indicator, an entry without a status) are Warnings, which the reader
// collects for the run and never turns into errors.
package camt
