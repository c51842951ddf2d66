package ipm

import "fmt"

// The 1014 blocking: each block holds blockData bytes of the VBS stream,
// then blockTrailer bytes that are not data (usually 40 40, sometimes
// 00 00; nothing depends on their value). The last block is filled.
const (
	blockData    = 1012
	blockTrailer = 2
	blockSize    = blockData + blockTrailer
)

// storedOffset is the offset in a blocked file of byte off of its VBS
// stream.
func storedOffset(off int64) int64 { return off + blockTrailer*(off/blockData) }

// isFill reports whether b may fill a block after the end record: an
// EBCDIC space (cardutil writes it whatever the encoding), a zero byte, or
// an ASCII space, which a writer of ASCII files may use.
func isFill(b byte) bool { return b == 0x40 || b == 0x00 || b == 0x20 }

// unblocker removes the block trailers of a 1014-blocked stream and passes
// the data on. It holds no data itself.
type unblocker struct {
	pos   int   // position inside the current block
	total int64 // bytes fed
	next  func([]byte)
}

// feed consumes the next piece of the blocked stream.
func (u *unblocker) feed(p []byte) {
	u.total += int64(len(p))
	for len(p) > 0 {
		if u.pos >= blockData {
			k := min(blockSize-u.pos, len(p))
			p, u.pos = p[k:], u.pos+k
			if u.pos == blockSize {
				u.pos = 0
			}
			continue
		}
		k := min(blockData-u.pos, len(p))
		u.next(p[:k])
		p, u.pos = p[k:], u.pos+k
	}
}

// check is the blocking's own verdict once the stream has ended: a blocked
// file is whole blocks. Requiring it keeps an unblocked file shorter than
// one block from also reading as blocked.
func (u *unblocker) check() error {
	if u.total%blockSize != 0 {
		return fmt.Errorf("%w: %d bytes is not a whole number of %d-byte blocks (the last block has %d bytes)",
			ErrFraming, u.total, blockSize, u.total%blockSize)
	}
	return nil
}
