package audit

import (
	"context"
	"hash/maphash"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
)

// maxShared bounds the checks a run remembers by fetch key (sharedChecks);
// a variable for the tests.
var maxShared = 16384

// sharedChecks remembers the checks of a run by fetch key: the URL without
// its #fragment, which no request carries. Links that differ only in their
// fragment are fetched once: the first to come is checked, the others wait
// for that check (without holding a slot of their host) and take it. The
// last maxShared keys are remembered; further back, with a history, a
// filter of every key of the run (seen) tells when a twin may have been
// checked, and the history gives its check (sibling).
type sharedChecks struct {
	mu     sync.Mutex
	m      map[string]*flight
	ring   []string // keys in the order added; ring[next] is the oldest when full
	next   int
	filter bool       // keep seen (with a history)
	seen   *keyFilter // made at the first key
}

// keyFilter is a Bloom filter of the fetch keys of a run: a key it does
// not hold was never seen; one it holds probably was (about 3% false
// positives at a million keys, each costing a query of the history).
type keyFilter struct {
	seed maphash.Seed
	bits []uint64
}

const keyFilterBits = 1 << 23 // 1 MiB

func newKeyFilter() *keyFilter {
	return &keyFilter{seed: maphash.MakeSeed(), bits: make([]uint64, keyFilterBits/64)}
}

// add adds key and reports whether it was (probably) there before.
func (f *keyFilter) add(key string) bool {
	h := maphash.String(f.seed, key)
	h1, h2 := uint32(h), uint32(h>>32)|1
	there := true
	for i := uint32(0); i < 3; i++ {
		b := (h1 + i*h2) % keyFilterBits
		w, m := b/64, uint64(1)<<(b%64)
		if f.bits[w]&m == 0 {
			there = false
			f.bits[w] |= m
		}
	}
	return there
}

// flight is one check that links may share.
type flight struct {
	done    chan struct{} // closed when c is set
	c       Check
	waiting atomic.Int32 // followers waiting, their slots given back
}

// join returns the flight of key, and whether the caller leads it (makes
// the check, then calls land); seen says whether the key was (probably)
// joined before, its flight forgotten since.
func (s *sharedChecks) join(key string) (f *flight, leader, seen bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.m[key]; ok {
		return f, false, true
	}
	if s.filter {
		if s.seen == nil {
			s.seen = newKeyFilter()
		}
		seen = s.seen.add(key)
	}
	if s.m == nil {
		s.m = map[string]*flight{}
	}
	f = &flight{done: make(chan struct{})}
	s.m[key] = f
	if len(s.ring) < maxShared {
		s.ring = append(s.ring, key)
	} else {
		delete(s.m, s.ring[s.next]) // a flight still in the air keeps its followers
		s.ring[s.next] = key
		s.next = (s.next + 1) % maxShared
	}
	return f, true, seen
}

// land sets the check of f and wakes its followers.
func (f *flight) land(c Check) {
	f.c = c
	close(f.done)
}

// fetchKey returns the URL a networked link is fetched as, without its
// fragment, and whether the link may share its check (networked, not cut).
func fetchKey(l *Link) (string, bool) {
	if l.Cut || !networked(l.Scheme) {
		return "", false
	}
	key, _, _ := strings.Cut(l.URL, "#")
	return key, true
}

// checkShared checks l through the flight of its fetch key: as the
// leader, by checking the key; as a follower, by giving back its host
// slot (h.hs becomes nil) and waiting for the leader's check. Either way
// the check is made l's own (personal).
func (a *Auditor) checkShared(ctx context.Context, l *Link, h *holder, key string) Check {
	f, leader, seen := a.shared.join(key)
	if leader {
		if seen && a.db != nil && !strings.Contains(key, "@") {
			// a twin may have been checked earlier in the run, its
			// flight forgotten: the history has its check (not for URLs
			// with user information, which the history keeps redacted)
			if c, twin, ok, err := a.db.sibling(key, a.started); err == nil && ok {
				f.land(personal(c, twin, key))
				return personal(c, twin, l.URL)
			}
		}
		lk := *l
		lk.URL = key
		c := a.check(ctx, &lk, h)
		f.land(c)
		return personal(c, key, l.URL)
	}
	h.release(a)
	f.waiting.Add(1)
	defer f.waiting.Add(-1)
	select {
	case <-f.done:
	case <-ctx.Done():
		return Check{Status: Unchecked, Class: ClassCanceled, Error: "canceled"}
	}
	c := f.c
	c.Chain = append([]Hop(nil), c.Chain...)
	return personal(c, key, l.URL)
}

// personal returns c, the check of key, as the check of the link own
// (key with another fragment, or none): the URL that answered, and the
// first hop of a redirect chain, say own where they say key, as a check
// of own itself would.
func personal(c Check, key, own string) Check {
	if key == own {
		return c
	}
	was, now := shown(key), shown(own)
	if c.FinalURL == was {
		c.FinalURL = now
	}
	if len(c.Chain) > 0 && c.Chain[0].URL == was {
		c.Chain = append([]Hop(nil), c.Chain...)
		c.Chain[0].URL = now
	}
	return c
}

// shown is a URL as the checkers write it in a Check: parsed, written
// again and redacted.
func shown(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return Redact(raw)
	}
	return Redact(u.String())
}
