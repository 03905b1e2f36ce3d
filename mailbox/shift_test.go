package mailbox

import (
	"reflect"
	"testing"
	"unsafe"
)

// int64s calls fn with every int64 that v holds, through structs and the
// elements of slices, exported or not; with fill, it first gives each nil
// slice of a type that holds an int64 two elements, so that there is
// something to visit.
func int64s(v reflect.Value, path string, fill bool, fn func(path string, x reflect.Value)) {
	switch v.Kind() {
	case reflect.Int64:
		fn(path, v)
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Field(i)
			if !f.CanSet() {
				f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
			}
			int64s(f, path+"."+v.Type().Field(i).Name, fill, fn)
		}
	case reflect.Slice:
		if fill && v.IsNil() && holdsInt64(v.Type().Elem()) {
			v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		}
		for i := range v.Len() {
			int64s(v.Index(i), path+"[]", fill, fn)
		}
	}
}

// holdsInt64 tells whether a value of type t holds an int64 that int64s
// visits.
func holdsInt64(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int64:
		return true
	case reflect.Struct:
		for i := range t.NumField() {
			if holdsInt64(t.Field(i).Type) {
				return true
			}
		}
	case reflect.Slice:
		return holdsInt64(t.Elem())
	}
	return false
}

// TestShiftCoversOffsets: Part.shift moves every int64 a Part holds (all
// of them are file offsets), but the spans of a base64 part, which are
// offsets in its decoded bytes, and the header when not asked to. A new
// int64 field in Part, or in a type it holds, fails this test until shift
// moves it (or the test is told why not).
func TestShiftCoversOffsets(t *testing.T) {
	for _, tt := range []struct {
		encoding string
		header   bool
	}{{"", true}, {"quoted-printable", false}, {"base64", true}} {
		var p Part
		p.Encoding, p.Text = tt.encoding, []byte("x")
		n := int64(0)
		int64s(reflect.ValueOf(&p).Elem(), "Part", true, func(_ string, x reflect.Value) {
			n++
			x.SetInt(1000 * n)
		})
		if n < 12 {
			t.Fatalf("only %d int64s found in a Part", n)
		}
		p.shift(func(v int64) int64 { return v + 7 }, tt.header)
		k := int64(0)
		int64s(reflect.ValueOf(&p).Elem(), "Part", false, func(path string, x reflect.Value) {
			k++
			want := 1000*k + 7
			switch {
			case path == "Part.Spans[].Raw" && tt.encoding == "base64",
				(path == "Part.Header[].Offset" || path == "Part.Header[].End") && !tt.header:
				want = 1000 * k // not moved
			}
			if x.Int() != want {
				t.Errorf("%s (encoding %q, header %v): %d, want %d", path, tt.encoding, tt.header, x.Int(), want)
			}
		})
	}
}
