// Package mt940 reads SWIFT MT940 customer statements and MT942 interim
// transaction reports into statement-side formats.Records, and writes
// deterministic MT940 files for tests and demonstrations.
//
// Messages may come with or without the {1:}{2:}{4: block envelope, several
// to a file, with CRLF or LF line ends, in UTF-8 or ISO-8859 text. Each
// :61: statement line becomes one Record, with the references of the :86:
// that follows it. The reader streams: it holds one field and one pending
// statement line at a time.
//
// What banks really send is tolerated with a Warning (text outside any
// field, control bytes, a trailing "-" line, an unknown tag, an amount
// without a decimal comma, a statement whose balances do not add up). What
// is money is refused with a *formats.ParseError naming the line: an
// impossible date, a missing opening or closing balance, a second :25: in
// one message, an amount with more decimals than its currency has, an
// unknown currency or XXX. See docs/formats/mt940.md.
package mt940
