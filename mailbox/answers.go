package mailbox

import (
	"sync"
	"sync/atomic"
)

// answers keeps what a function of a string gave, for inputs that repeat
// from message to message (charset labels, Content-Type fields), up to
// limit of them: past that, new inputs are simply not kept. It is safe for
// concurrent use.
type answers[V any] struct {
	m     sync.Map // string -> V
	n     atomic.Int64
	limit int64
}

func (a *answers[V]) get(key string) (V, bool) {
	if v, ok := a.m.Load(key); ok {
		return v.(V), true
	}
	var zero V
	return zero, false
}

func (a *answers[V]) put(key string, v V) {
	if a.n.Add(1) <= a.limit {
		a.m.Store(key, v)
	}
}
