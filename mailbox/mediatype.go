package mailbox

import (
	"mime"
	"strings"
)

// parseMediaType is mime.ParseMediaType with a fast path for the forms
// nearly every Content-Type field has: a type, a subtype and a few plain
// parameters ("text/plain; charset=us-ascii; format=flowed"). Those are
// read here with one map and no lower-casing copies when the text is
// lower case already; anything else (RFC 2231 continuations, escapes in
// quoted strings, repeated parameters, odd characters) goes to
// mime.ParseMediaType. FuzzMediaType holds the two to the same answers.
//
// Answers for fields without a boundary (those of text parts, which repeat
// from message to message) are kept, up to a few hundred: their parameter
// maps are shared, and must not be modified.
func parseMediaType(v string) (string, map[string]string, error) {
	if c, ok := mediaTypes.get(v); ok {
		return c.mt, c.params, nil
	}
	mt, params, ok := simpleMediaType(v)
	if !ok {
		return mime.ParseMediaType(v)
	}
	if _, b := params["boundary"]; !b {
		mediaTypes.put(v, &mediaTypeAnswer{mt, params})
	}
	return mt, params, nil
}

type mediaTypeAnswer struct {
	mt     string
	params map[string]string
}

var mediaTypes = answers[*mediaTypeAnswer]{limit: 512}

func simpleMediaType(v string) (string, map[string]string, bool) {
	i := skipWS(v, 0)
	start := i
	i = skipToken(v, i)
	if i == start || i >= len(v) || v[i] != '/' {
		return "", nil, false
	}
	i = skipToken(v, i+1)
	if v[i-1] == '/' {
		return "", nil, false
	}
	mt := lowerASCII(v[start:i])
	var params map[string]string
	for {
		i = skipWS(v, i)
		if i == len(v) {
			if params == nil {
				params = map[string]string{}
			}
			return mt, params, true
		}
		if v[i] != ';' {
			return "", nil, false
		}
		i = skipWS(v, i+1)
		if i == len(v) {
			continue // a trailing ";"
		}
		ns := i
		i = skipToken(v, i)
		if i == ns || i == len(v) || v[i] != '=' {
			return "", nil, false
		}
		name := v[ns:i]
		if strings.IndexByte(name, '*') >= 0 {
			return "", nil, false // RFC 2231
		}
		i++
		var val string
		if i < len(v) && v[i] == '"' {
			j := strings.IndexAny(v[i+1:], "\"\\\r\n")
			if j < 0 || v[i+1+j] != '"' {
				return "", nil, false
			}
			val, i = v[i+1:i+1+j], i+j+2
		} else {
			vs := i
			i = skipToken(v, i)
			if i == vs {
				return "", nil, false
			}
			val = v[vs:i]
		}
		if params == nil {
			params = make(map[string]string, 2)
		}
		name = lowerASCII(name)
		if _, dup := params[name]; dup {
			return "", nil, false
		}
		params[name] = val
	}
}

func skipWS(v string, i int) int {
	for i < len(v) && (v[i] == ' ' || v[i] == '\t') {
		i++
	}
	return i
}

// skipToken skips the characters of an RFC 2045 token.
func skipToken(v string, i int) int {
	for i < len(v) && isTokenChar(v[i]) {
		i++
	}
	return i
}

func isTokenChar(c byte) bool { return tokenChars[c] }

var tokenChars = func() (t [256]bool) {
	for c := '!'; c < 0x7f; c++ {
		t[c] = !strings.ContainsRune(`()<>@,;:\"/[]?=`, c)
	}
	return t
}()

// lowerASCII returns s in lower case, without a copy if it is already.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}
