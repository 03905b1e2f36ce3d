package rewrite

import (
	"encoding/binary"
	"hash/maphash"
)

// urlSet is a set of strings kept in chunks of bytes, for the URLs of a
// message found in a further pass of Message: a map[string]bool of the
// URLs of a link-dense message costs some 60 bytes for each besides the
// strings; here each costs its bytes, its length and a slot or two of
// an open-addressed table, and nothing is copied as the set grows but
// the table. The zero value is an empty set.
type urlSet struct {
	seed   maphash.Seed
	chunks [][]byte // the strings, each after its length (uvarint)
	slots  []int    // chunk<<16 | offset in it, plus one; 0: free
	n      int
}

// urlChunk is the size of a chunk; a string longer than it has a chunk
// of its own (at offset 0).
const urlChunk = 1 << 16

// find returns the slot of u, or of the free slot where it would go.
func (s *urlSet) find(u string) int {
	mask := len(s.slots) - 1
	for i := int(maphash.String(s.seed, u)) & mask; ; i = (i + 1) & mask {
		o := s.slots[i]
		if o == 0 || string(s.at(o)) == u {
			return i
		}
	}
}

// at returns the bytes of the string of slot value o.
func (s *urlSet) at(o int) []byte {
	o--
	c := s.chunks[o>>16][o&(urlChunk-1):]
	l, n := binary.Uvarint(c)
	return c[n : n+int(l)]
}

// add puts u in the set.
func (s *urlSet) add(u string) {
	if s.slots == nil {
		s.seed = maphash.MakeSeed()
		s.slots = make([]int, 64)
	}
	if 4*(s.n+1) > 3*len(s.slots) {
		old := s.slots
		s.slots = make([]int, 2*len(old))
		mask := len(s.slots) - 1
		for _, o := range old {
			if o == 0 {
				continue
			}
			i := int(maphash.Bytes(s.seed, s.at(o))) & mask
			for s.slots[i] != 0 {
				i = (i + 1) & mask
			}
			s.slots[i] = o
		}
	}
	i := s.find(u)
	if s.slots[i] != 0 {
		return
	}
	need := binary.MaxVarintLen64 + len(u)
	k := len(s.chunks) - 1
	if k < 0 || len(s.chunks[k])+need > urlChunk {
		// the first chunk starts small and grows by append: the
		// offsets in it stay
		size := urlChunk
		if k < 0 {
			size = 512
		}
		s.chunks = append(s.chunks, make([]byte, 0, max(size, need)))
		k++
	}
	c := s.chunks[k]
	s.slots[i] = k<<16 | len(c) + 1
	c = binary.AppendUvarint(c, uint64(len(u)))
	s.chunks[k] = append(c, u...)
	s.n++
}

// has reports whether u is in the set.
func (s *urlSet) has(u string) bool {
	if s.n == 0 {
		return false
	}
	return s.slots[s.find(u)] != 0
}
