package rewrite

import (
	"encoding/binary"
	"hash/maphash"
)

// urlSet is a set of strings kept in one buffer, for the URLs of a
// message found in a further pass of Message: a map[string]bool of the
// URLs of a link-dense message costs some 60 bytes for each besides the
// strings; here each costs its bytes, its length and a slot or two of
// an open-addressed table. The zero value is an empty set.
type urlSet struct {
	seed  maphash.Seed
	data  []byte // the strings, each after its length (uvarint)
	slots []int  // offset in data plus one; 0: free
	n     int
}

// find returns the slot of u, or of the free slot where it would go.
func (s *urlSet) find(u string) int {
	mask := len(s.slots) - 1
	for i := int(maphash.String(s.seed, u)) & mask; ; i = (i + 1) & mask {
		o := s.slots[i]
		if o == 0 || string(s.at(o-1)) == u {
			return i
		}
	}
}

// at returns the bytes of the string stored at offset o of data.
func (s *urlSet) at(o int) []byte {
	l, n := binary.Uvarint(s.data[o:])
	return s.data[o+n : o+n+int(l)]
}

// add puts u in the set.
func (s *urlSet) add(u string) {
	if s.slots == nil {
		s.seed = maphash.MakeSeed()
		s.slots = make([]int, 64)
	}
	if 2*(s.n+1) > len(s.slots) {
		old := s.slots
		s.slots = make([]int, 2*len(old))
		mask := len(s.slots) - 1
		for _, o := range old {
			if o == 0 {
				continue
			}
			i := int(maphash.Bytes(s.seed, s.at(o-1))) & mask
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
	s.slots[i] = len(s.data) + 1
	s.data = binary.AppendUvarint(s.data, uint64(len(u)))
	s.data = append(s.data, u...)
	s.n++
}

// has reports whether u is in the set.
func (s *urlSet) has(u string) bool {
	if s.n == 0 {
		return false
	}
	return s.slots[s.find(u)] != 0
}
