package event

import (
	"reflect"
	"sync"
)

// The fast path's payloads live for one fastCheck (decoded, validated,
// zeroed), so the arrays under their slice members need not be made for
// each: a lender hands them out from their codec's stock and takes them
// all back, cleared, once the payload is zeroed. Strict verify decodes
// a payload per entry; without this, most of what it allocates is these
// arrays. A payload fastDecode returns (Check's caller keeps it) has its
// own arrays.

// lentArray is an array of a slice codec's element type, as a slice value
// of its length.
type lentArray struct {
	s reflect.Value
	c *codec
}

// lender hands out arrays for one decode and takes them back.
type lender struct{ out []*lentArray }

var lenders = sync.Pool{New: func() any { return new(lender) }}

// makeSlice returns a slice value of c's type and length at least n
// (all zero): lent when the decoder has a lender.
func (d *fastDecoder) makeSlice(c *codec, n int) reflect.Value {
	if d.lender == nil {
		return reflect.MakeSlice(c.typ, n, n)
	}
	a, _ := c.arrays.Get().(*lentArray)
	if a == nil || a.s.Len() < n {
		if a != nil {
			c.arrays.Put(a)
		}
		a = &lentArray{s: reflect.MakeSlice(c.typ, n, n), c: c}
	}
	d.lender.out = append(d.lender.out, a)
	return a.s
}

// takeBack clears every array lent (their strings share the data
// decoded) and returns it to its codec's stock; then l to lenders.
func (l *lender) takeBack() {
	for i, a := range l.out {
		a.s.Clear()
		a.c.arrays.Put(a)
		l.out[i] = nil
	}
	l.out = l.out[:0]
	lenders.Put(l)
}
