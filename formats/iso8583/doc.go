// Package iso8583 reads files of ISO 8583 (1987) card messages as
// formats.Records, and writes such files for tests and benchmarks.
//
// A file is a sequence of messages in one framing (FramingRDW, FramingLen2,
// FramingASCII4, FramingHex, FramingRaw), each decoded with a
// moov-io/iso8583 spec: a built-in one (SpecName87, the default, or
// SpecName87ASCII) or a JSON spec file. A wrong spec or framing can decode
// garbage without an error, so every value the reader interprets is checked
// after decoding, and a file that fails is reported message by message.
//
// Message classes map to record kinds: financial requests and advices
// (x2xx) post as formats.Clearing; authorisations (x1xx) are
// formats.Notice; reversals (x4xx) are formats.Reversal, linked to their
// original through the RRN or DE90; responses (xx10, xx30) and network
// management (08xx) are formats.Skip. The key of a message is
// "iso8583:<DE32 or ->:<DE37>:<MTI with the repeat digit folded>", so a
// repeat (0201) has the key and the digest of its original (0200), and
// neither depends on the framing.
//
// PANs leave the package only as pii.Account values. Errors never quote
// card data: decoder messages about card-data fields are withheld, and
// every decoder message has long digit runs masked.
//
// docs/formats/iso8583.md documents keys, mappings, options and limits;
// docs/decisions/iso8583-*.md the choices behind them.
package iso8583
