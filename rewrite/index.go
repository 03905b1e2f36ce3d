package rewrite

import (
	"sort"
	"strings"
)

// index finds, for a link, the first rule at or after a position that
// matches it, without trying every rule. Each rule is filed once, under
// the condition that narrows it most:
//
//   - a prefix (map's from, else match.prefix): in a radix tree over
//     canonical URLs, walked along the link's canonical form;
//   - else a host (map's from-host, else match.host): exact hosts in a
//     map, "*.domain" in a map of domains looked up for the link's host
//     and every suffix of it;
//   - else in a plain list tried in order.
//
// A lookup costs the length of the URL plus the number of labels of its
// host, plus the rules of the plain list: not the number of map rules.
// Lists hold rule numbers in ascending order.
//
// The host maps hold one rule number per host, the common case, in the
// map itself; a host of several rules holds -1-k, its rules being
// lists[k]. So 100,000 map rules cost no slice each.
type index struct {
	exact  map[string]int32
	suffix map[string]int32
	lists  [][]int32
	trie   radix
	rest   []int32
}

func (x *index) build(rules []*rule) {
	nExact, nSuffix := 0, 0
	count := func(h string) {
		if strings.HasPrefix(h, "*.") {
			nSuffix++
		} else {
			nExact++
		}
	}
	for _, r := range rules {
		switch {
		case r.from() != "":
		case r.matchSpec != nil && len(r.prefixes) > 0:
		case r.fromHost() != "":
			count(r.fromHost())
		case r.matchSpec != nil:
			for _, h := range r.hosts {
				count(h)
			}
		}
	}
	x.exact = make(map[string]int32, nExact)
	x.suffix = make(map[string]int32, nSuffix)
	for i, r := range rules {
		id := int32(i)
		switch {
		case r.from() != "":
			x.trie.insert(r.from(), id)
		case r.matchSpec != nil && len(r.prefixes) > 0:
			for _, p := range r.prefixes {
				x.trie.insert(p, id)
			}
		case r.fromHost() != "":
			x.addHost(r.fromHost(), id)
		case r.matchSpec != nil && len(r.hosts) > 0:
			for _, h := range r.hosts {
				x.addHost(h, id)
			}
		default:
			x.rest = append(x.rest, id)
		}
	}
}

func (x *index) addHost(h string, id int32) {
	if d, ok := strings.CutPrefix(h, "*."); ok {
		x.add(x.suffix, d, id)
	} else {
		x.add(x.exact, h, id)
	}
}

func (x *index) add(m map[string]int32, key string, id int32) {
	v, ok := m[key]
	switch {
	case !ok:
		m[key] = id
	case v >= 0:
		if v != id {
			x.lists = append(x.lists, []int32{v, id})
			m[key] = int32(-len(x.lists))
		}
	default:
		l := &x.lists[-v-1]
		*l = appendID(*l, id)
	}
}

// lookup offers f the rules of key in m.
func (x *index) lookup(m map[string]int32, key string, f *finder) {
	v, ok := m[key]
	switch {
	case !ok:
	case v >= 0:
		one := [1]int32{v}
		f.try(one[:])
	default:
		f.try(x.lists[-v-1])
	}
}

// appendID appends id unless it is already last (a rule listing the same
// host twice).
func appendID(l []int32, id int32) []int32 {
	if n := len(l); n > 0 && l[n-1] == id {
		return l
	}
	return append(l, id)
}

// finder is one lookup: the first rule numbered pos or more that matches
// st, in best (-1 if none yet).
type finder struct {
	rules []*rule
	st    *state
	pos   int32
	best  int32
}

// try takes the first rule of the sorted list l at or after pos, and
// before best, that matches.
func (f *finder) try(l []int32) {
	i, hi := 0, len(l)
	for i < hi {
		m := int(uint(i+hi) >> 1)
		if l[m] < f.pos {
			i = m + 1
		} else {
			hi = m
		}
	}
	for ; i < len(l); i++ {
		id := l[i]
		if f.best >= 0 && id >= f.best {
			return
		}
		if f.rules[id].matches(f.st) {
			f.best = id
			return
		}
	}
}

// next returns the number of the first rule at or after pos that matches
// st, or -1.
func (x *index) next(rules []*rule, st *state, pos int) int {
	f := finder{rules: rules, st: st, pos: int32(pos), best: -1}
	f.try(x.rest)
	if st.host != "" {
		x.lookup(x.exact, st.host, &f)
		x.lookup(x.suffix, st.host, &f) // "*.domain" holds the domain too
		for h := st.host; ; {
			i := strings.IndexByte(h, '.')
			if i < 0 {
				break
			}
			h = h[i+1:]
			x.lookup(x.suffix, h, &f)
		}
	}
	x.trie.walk(st.canonical, &f)
	return int(f.best)
}

// radix is a radix tree of strings, each node holding the rules whose
// prefix ends there.
type radix struct {
	label string
	kids  []*radix // sorted by the first byte of their labels
	ids   []int32
}

func (n *radix) insert(key string, id int32) {
	for {
		if key == "" {
			n.ids = appendID(n.ids, id)
			return
		}
		i := sort.Search(len(n.kids), func(i int) bool { return n.kids[i].label[0] >= key[0] })
		if i == len(n.kids) || n.kids[i].label[0] != key[0] {
			n.kids = append(n.kids, nil)
			copy(n.kids[i+1:], n.kids[i:])
			n.kids[i] = &radix{label: key, ids: []int32{id}}
			return
		}
		k := n.kids[i]
		l := commonPrefix(key, k.label)
		if l < len(k.label) {
			split := &radix{label: k.label[:l], kids: []*radix{k}}
			k.label = k.label[l:]
			n.kids[i] = split
			k = split
		}
		key = key[l:]
		n = k
	}
}

func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// walk offers f the rules of every prefix of s in the tree.
func (n *radix) walk(s string, f *finder) {
	for {
		if len(n.ids) > 0 {
			f.try(n.ids)
		}
		if s == "" || len(n.kids) == 0 {
			return
		}
		c := s[0]
		lo, hi := 0, len(n.kids)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if n.kids[m].label[0] < c {
				lo = m + 1
			} else {
				hi = m
			}
		}
		if lo == len(n.kids) || !strings.HasPrefix(s, n.kids[lo].label) {
			return
		}
		n = n.kids[lo]
		s = s[len(n.label):]
	}
}
