// Package ipm reads Mastercard IPM clearing files as formats.Records.
//
// An IPM file is a stream of ISO 8583:1993 messages (MTIs 1240, 1442, 1644,
// 1740, told apart by the DE24 function code) with a binary bitmap, in
// EBCDIC or ASCII, each prefixed by a 4-byte big-endian length (VBS), and
// usually cut into 1014-byte blocks whose last two bytes are not data. The
// private data of a message are PDS subfields ("tttt lll value") in DE48,
// continued in DE62 and DE123 to DE125.
//
// The layers build upward: unblock.go removes the block trailers, vbs.go
// cuts records, spec.go and decode.go decode a record with a
// moov-io/iso8583 spec, pds.go splits the PDSs, control.go checks each
// logical file (header 1644/697 to trailer 1644/695) against its trailer,
// and mapping.go turns messages into Records. reader.go detects the
// blocking and the encoding, and reads a file once, front to back, holding
// one message at a time once the blocking is known.
//
// docs/formats/ipm.md describes the keys, what is refused and what is
// warned, and the lifecycle mapping.
package ipm
