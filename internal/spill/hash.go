package spill

import "hash/maphash"

// Hash is a 128-bit hash of a key.
type Hash struct{ Hi, Lo uint64 }

func (a Hash) cmp(b Hash) int {
	switch {
	case a.Hi < b.Hi:
		return -1
	case a.Hi > b.Hi:
		return 1
	case a.Lo < b.Lo:
		return -1
	case a.Lo > b.Lo:
		return 1
	}
	return 0
}

// A Hasher hashes keys with two random seeds of its own. Hashes of
// different Hashers are unrelated: use one Hasher for one Set.
type Hasher struct{ a, b maphash.Seed }

// NewHasher returns a Hasher with new random seeds.
func NewHasher() *Hasher {
	return &Hasher{a: maphash.MakeSeed(), b: maphash.MakeSeed()}
}

// String returns the hash of s.
func (h *Hasher) String(s string) Hash {
	return Hash{maphash.String(h.a, s), maphash.String(h.b, s)}
}

// Bytes returns the hash of p, equal to String(string(p)).
func (h *Hasher) Bytes(p []byte) Hash {
	return Hash{maphash.Bytes(h.a, p), maphash.Bytes(h.b, p)}
}
