package audit

import (
	"github.com/linkscan/linkscan/references"
)

// RefResolver resolves news:, nntp:, mid: and cid: links against the
// archive. *references.Resolver satisfies it.
type RefResolver interface {
	Resolve(canonical string, ctx *references.Context) (references.Resolution, error)
}

// checkRef answers a reference offline: OfflineOK when the archive holds
// it; otherwise Unchecked (a message not in this archive may well exist
// elsewhere, so it is never called dead).
func checkRef(r RefResolver, l *Link) Check {
	if r == nil {
		return Check{Status: Unchecked, Class: ClassScheme, Error: "no archive index to resolve " + l.Scheme + ": links"}
	}
	ctx := &references.Context{Loc: references.Location{File: l.Path, Offset: l.Offset, MessageID: l.MessageID, Blob: l.Blob}, Part: l.Part}
	res, err := r.Resolve(l.URL, ctx)
	if err != nil {
		return Check{Status: Unchecked, Class: ClassLookup, Error: err.Error()}
	}
	switch res.Status {
	case references.Resolved, references.Ambiguous:
		return Check{Status: OfflineOK}
	case references.Dangling:
		return Check{Status: Unchecked, Class: ClassNotInIndex, Error: "not in the archive"}
	default:
		return Check{Status: Unchecked, Class: ClassNotInIndex, Error: string(res.Status)}
	}
}
