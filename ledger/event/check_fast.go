package event

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/opx-dev/opx/internal/jsonscan"
)

// The fast path of Check. Strict verify checks every payload of the
// ledger; decoding each with encoding/json (a Decoder copying and scanning
// the value, then reflection per member, DisallowUnknownFields) was half
// its CPU. fastDecode fills the same typed struct from one scan of the
// bytes, driven by a plan built once per registered type from its struct
// tags, and then the payload's own Validate runs on it.
//
// It is never trusted alone: it accepts only input it understands
// completely, where the struct it fills is the one encoding/json would
// fill, and says "not sure" for anything else, which then goes to the
// reference path (decode), as does every payload that fails Validate, so
// every error is the reference's own. It declines:
//
//   - a member whose key is not exactly a field's name (encoding/json
//     would match a case variant, or refuse an unknown member), contains
//     an escape or a non-ASCII byte, or appears twice;
//   - a value of the wrong kind, null for a scalar, a number that is not a
//     plain integer of at most 18 digits or does not fit the field, a
//     negative number for an unsigned field;
//   - a string with a control character, invalid UTF-8 or a \u escape of
//     a surrogate;
//   - anything but whitespace after the object, input nested deeper than
//     maxFastDepth, and every type or field the plan does not cover
//     (methods of encoding.TextUnmarshaler or json.Unmarshaler, maps,
//     interfaces, floats, arrays, embedded structs, unusual tags).
//
// TestFastDecode_MatchesReference and FuzzFastCheck hold it to that: for
// every input, when the fast path accepts, encoding/json decodes the same
// input without error to a deeply equal struct, and Check's verdict is
// the reference's.

// maxFastDepth bounds the fast path's recursion; deeper input goes to
// encoding/json (payload types nest two or three levels).
const maxFastDepth = 32

// codec says how to fill one value of a Go type from JSON.
type codec struct {
	kind reflect.Kind // String, Bool, Int*, Uint*, Slice, Struct, Pointer; Invalid: not covered
	typ  reflect.Type
	elem *codec // Slice and Pointer
	plan *plan  // Struct
	// zeroed holds zero payloads of a registered type for fastCheck,
	// which zeroes each after use: one allocation fewer per entry.
	zeroed sync.Pool
	// arrays holds arrays of a Slice codec's elements for a lender
	// (check_fast_lend.go).
	arrays sync.Pool
}

// field is one member of a struct plan.
type field struct {
	name string
	off  uintptr
	c    *codec
}

// plan lists a struct type's members; ok is false when the type cannot be
// decoded by the fast path at all.
type plan struct {
	fields []field
	ok     bool
}

var (
	fastOnce  sync.Once
	fastPlans map[string]*codec // by entry type; nil entry: no fast path
)

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// buildFastPlans makes the plan of every registered type whose
// constructor returns a pointer to a zero struct.
func buildFastPlans() {
	fastPlans = map[string]*codec{}
	seen := map[reflect.Type]*codec{}
	for typ, f := range registry {
		v := reflect.ValueOf(f())
		if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct || !v.Elem().IsZero() ||
			v.Type().Implements(jsonUnmarshaler) || v.Type().Implements(textUnmarshaler) {
			continue
		}
		if c := codecOf(v.Elem().Type(), seen); c.kind == reflect.Struct && c.plan.ok {
			fastPlans[typ] = c
		}
	}
}

// codecOf returns the codec of t; a type it does not cover gets kind
// Invalid, which fails any value given for it.
func codecOf(t reflect.Type, seen map[reflect.Type]*codec) *codec {
	if c, ok := seen[t]; ok {
		return c
	}
	c := &codec{typ: t}
	seen[t] = c
	if t.Implements(jsonUnmarshaler) || t.Implements(textUnmarshaler) ||
		reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return c
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		c.kind = t.Kind()
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return c // []byte is base64 in encoding/json
		}
		c.elem = codecOf(t.Elem(), seen)
		c.kind = reflect.Slice
	case reflect.Pointer:
		if t.Elem().Kind() != reflect.Struct {
			return c
		}
		c.elem = codecOf(t.Elem(), seen)
		c.kind = reflect.Pointer
	case reflect.Struct:
		c.plan = planOf(t, seen)
		c.kind = reflect.Struct
	}
	return c
}

// planOf lists the members of struct t as encoding/json names them. A
// struct with anything whose naming would need encoding/json's subtler
// rules (embedded fields, "-", options other than omitempty and
// omitzero, names outside [a-z0-9_], two fields of one name, more than 64
// members) is not covered.
func planOf(t reflect.Type, seen map[reflect.Type]*codec) *plan {
	p := &plan{}
	names := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if sf.Anonymous {
			return p
		}
		if !sf.IsExported() {
			continue
		}
		tag, hasTag := sf.Tag.Lookup("json")
		name, opts, _ := strings.Cut(tag, ",")
		for _, o := range strings.Split(opts, ",") {
			if o != "" && o != "omitempty" && o != "omitzero" {
				return p
			}
		}
		if !hasTag || name == "" || name == "-" || !plainName(name) || names[name] {
			return p
		}
		names[name] = true
		p.fields = append(p.fields, field{name: name, off: sf.Offset, c: codecOf(sf.Type, seen)})
	}
	p.ok = len(p.fields) <= 64
	return p
}

// plainName reports whether a tag name is of [a-z0-9_]: the only names
// the payload types use, and ones encoding/json takes as they are.
func plainName(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}

// fastCheck reports whether data is typ's payload, decoded by the fast
// path and valid; false means "not sure", not "invalid". The payload it
// fills is a pooled one (its strings share data), zeroed again after
// Validate.
func fastCheck(typ string, data []byte) bool {
	fastOnce.Do(buildFastPlans)
	c := fastPlans[typ]
	if c == nil {
		return false
	}
	p, _ := c.zeroed.Get().(Payload)
	if p == nil {
		p = registry[typ]()
	}
	ptr := reflect.ValueOf(p).UnsafePointer()
	l := lenders.Get().(*lender)
	ok := decodeWith(c, ptr, data, true, l) && p.Validate() == nil
	reflect.NewAt(c.typ, ptr).Elem().SetZero()
	c.zeroed.Put(p)
	l.takeBack()
	return ok
}

// fastDecode fills a new payload of typ from data, or reports false when
// it is not sure to fill it exactly as encoding/json would (see above).
// With alias, strings without escapes share data's bytes: only for a
// caller that drops the payload before data changes (Check).
func fastDecode(typ string, data []byte, alias bool) (Payload, bool) {
	fastOnce.Do(buildFastPlans)
	c := fastPlans[typ]
	if c == nil {
		return nil, false
	}
	p := registry[typ]()
	if !decodeInto(c, reflect.ValueOf(p).UnsafePointer(), data, alias) {
		return nil, false
	}
	return p, true
}

// decodeInto fills the zero struct of codec c at ptr from data.
func decodeInto(c *codec, ptr unsafe.Pointer, data []byte, alias bool) bool {
	return decodeWith(c, ptr, data, alias, nil)
}

// decodeWith is decodeInto with the slices' arrays lent by l (if not
// nil), for a payload dropped before l takes them back.
func decodeWith(c *codec, ptr unsafe.Pointer, data []byte, alias bool, l *lender) bool {
	d := fastDecoder{b: data, alias: alias, lender: l}
	d.space()
	if !d.object(c.plan, ptr, 0) {
		return false
	}
	d.space()
	return d.pos == len(d.b)
}

// fastDecoder is the scan of one payload.
type fastDecoder struct {
	b      []byte
	pos    int
	alias  bool
	lender *lender // lends the slices' arrays; nil: each is made
}

func (d *fastDecoder) space() {
	for d.pos < len(d.b) {
		switch d.b[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *fastDecoder) eat(c byte) bool {
	if d.pos < len(d.b) && d.b[d.pos] == c {
		d.pos++
		return true
	}
	return false
}

// object fills the struct at ptr from a JSON object.
func (d *fastDecoder) object(p *plan, ptr unsafe.Pointer, depth int) bool {
	if !p.ok || depth > maxFastDepth || !d.eat('{') {
		return false
	}
	d.space()
	if d.eat('}') {
		return true
	}
	var have uint64
	for {
		d.space()
		k, ok := d.key()
		if !ok {
			return false
		}
		i := 0
		for i < len(p.fields) && p.fields[i].name != string(k) {
			i++
		}
		if i == len(p.fields) || have&(1<<i) != 0 {
			return false // unknown, a case variant, or twice
		}
		have |= 1 << i
		d.space()
		if !d.eat(':') {
			return false
		}
		d.space()
		f := &p.fields[i]
		if !d.value(f.c, unsafe.Add(ptr, f.off), depth) {
			return false
		}
		d.space()
		if d.eat(',') {
			continue
		}
		return d.eat('}')
	}
}

// key returns a member's key when it is plain: printable ASCII without
// escapes.
func (d *fastDecoder) key() ([]byte, bool) {
	if !d.eat('"') {
		return nil, false
	}
	start := d.pos
	for d.pos < len(d.b) {
		c := d.b[d.pos]
		if c == '"' {
			k := d.b[start:d.pos]
			d.pos++
			return k, true
		}
		if c < 0x20 || c >= 0x80 || c == '\\' {
			return nil, false
		}
		d.pos++
	}
	return nil, false
}

// value fills the value at ptr, of codec c.
func (d *fastDecoder) value(c *codec, ptr unsafe.Pointer, depth int) bool {
	if d.pos >= len(d.b) {
		return false
	}
	if d.b[d.pos] == 'n' {
		// null leaves a scalar as it is in encoding/json but sets a
		// slice or pointer to nil: a fresh member is both, so only
		// those kinds take it here.
		if c.kind != reflect.Slice && c.kind != reflect.Pointer || !d.lit("null") {
			return false
		}
		return true
	}
	switch c.kind {
	case reflect.String:
		s, ok := d.str()
		if !ok {
			return false
		}
		*(*string)(ptr) = s
		return true
	case reflect.Bool:
		switch {
		case d.lit("true"):
			*(*bool)(ptr) = true
		case d.lit("false"):
			*(*bool)(ptr) = false
		default:
			return false
		}
		return true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, neg, ok := d.integer()
		if !ok {
			return false
		}
		v := int64(n)
		if neg {
			v = -v
		}
		return setInt(c.kind, ptr, v)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, neg, ok := d.integer()
		if !ok || neg {
			return false // encoding/json refuses even -0 for an unsigned field
		}
		return setUint(c.kind, ptr, n)
	case reflect.Struct:
		return d.object(c.plan, ptr, depth+1)
	case reflect.Pointer:
		if c.elem.kind != reflect.Struct {
			return false
		}
		nv := reflect.New(c.elem.typ).UnsafePointer()
		if !d.object(c.elem.plan, nv, depth+1) {
			return false
		}
		*(*unsafe.Pointer)(ptr) = nv
		return true
	case reflect.Slice:
		return d.array(c, ptr, depth)
	}
	return false
}

// array fills the slice at ptr from a JSON array; [] makes an empty,
// non-nil slice, as encoding/json does. Elements are filled in place
// (reflect's Index and Set would look up the pointer type each time).
func (d *fastDecoder) array(c *codec, ptr unsafe.Pointer, depth int) bool {
	if depth > maxFastDepth || !d.eat('[') {
		return false
	}
	size := c.elem.typ.Size()
	s := d.makeSlice(c, 4)
	n := 0
	d.space()
	if !d.eat(']') {
		for ; ; n++ {
			if n == s.Len() {
				g := d.makeSlice(c, 2*n)
				reflect.Copy(g, s)
				s = g
			}
			d.space()
			if !d.value(c.elem, unsafe.Add(s.UnsafePointer(), uintptr(n)*size), depth+1) {
				return false
			}
			d.space()
			if d.eat(',') {
				continue
			}
			if !d.eat(']') {
				return false
			}
			n++
			break
		}
	}
	*(*sliceHeader)(ptr) = sliceHeader{data: s.UnsafePointer(), len: n, cap: s.Len()}
	return true
}

// sliceHeader is the layout of every Go slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

func (d *fastDecoder) lit(w string) bool {
	if len(d.b)-d.pos < len(w) || string(d.b[d.pos:d.pos+len(w)]) != w {
		return false
	}
	d.pos += len(w)
	return true
}

// integer reads -?(0|[1-9][0-9]*) of at most 18 digits (so it fits an
// int64 either way), followed by no fraction or exponent.
func (d *fastDecoder) integer() (n uint64, neg bool, ok bool) {
	neg = d.eat('-')
	start := d.pos
	for d.pos < len(d.b) && d.b[d.pos] >= '0' && d.b[d.pos] <= '9' {
		n = n*10 + uint64(d.b[d.pos]-'0')
		d.pos++
		if d.pos-start > 18 {
			return 0, false, false
		}
	}
	digits := d.pos - start
	if digits == 0 || digits > 1 && d.b[start] == '0' {
		return 0, false, false
	}
	if d.pos < len(d.b) {
		switch d.b[d.pos] {
		case '.', 'e', 'E':
			return 0, false, false
		}
	}
	return n, neg, true
}

func setInt(k reflect.Kind, ptr unsafe.Pointer, v int64) bool {
	switch k {
	case reflect.Int, reflect.Int64:
		if k == reflect.Int && int64(int(v)) != v {
			return false
		}
		if k == reflect.Int {
			*(*int)(ptr) = int(v)
		} else {
			*(*int64)(ptr) = v
		}
	case reflect.Int32:
		if int64(int32(v)) != v {
			return false
		}
		*(*int32)(ptr) = int32(v)
	case reflect.Int16:
		if int64(int16(v)) != v {
			return false
		}
		*(*int16)(ptr) = int16(v)
	case reflect.Int8:
		if int64(int8(v)) != v {
			return false
		}
		*(*int8)(ptr) = int8(v)
	default:
		return false
	}
	return true
}

func setUint(k reflect.Kind, ptr unsafe.Pointer, v uint64) bool {
	switch k {
	case reflect.Uint, reflect.Uint64:
		if k == reflect.Uint && uint64(uint(v)) != v {
			return false
		}
		if k == reflect.Uint {
			*(*uint)(ptr) = uint(v)
		} else {
			*(*uint64)(ptr) = v
		}
	case reflect.Uint32:
		if uint64(uint32(v)) != v {
			return false
		}
		*(*uint32)(ptr) = uint32(v)
	case reflect.Uint16:
		if uint64(uint16(v)) != v {
			return false
		}
		*(*uint16)(ptr) = uint16(v)
	case reflect.Uint8:
		if uint64(uint8(v)) != v {
			return false
		}
		*(*uint8)(ptr) = uint8(v)
	default:
		return false
	}
	return true
}

// str reads a JSON string of valid UTF-8 without control characters,
// decoding the escapes JSON has except \u escapes of surrogates.
func (d *fastDecoder) str() (string, bool) {
	if !d.eat('"') {
		return "", false
	}
	start := d.pos
	if i := jsonscan.PlainRun(d.b, start); i < len(d.b) && d.b[i] == '"' {
		// The common case: no escape up to the closing quote.
		raw := d.b[start:i]
		d.pos = i + 1
		if !utf8.Valid(raw) {
			return "", false
		}
		if d.alias {
			return unsafe.String(unsafe.SliceData(raw), len(raw)), true
		}
		return string(raw), true
	}
	for {
		if d.pos >= len(d.b) {
			return "", false
		}
		c := d.b[d.pos]
		if c == '"' {
			break
		}
		if c < 0x20 {
			return "", false
		}
		if c == '\\' {
			d.pos++ // the escaped byte cannot end the string
		}
		d.pos++
	}
	raw := d.b[start:d.pos]
	d.pos++
	if !utf8.Valid(raw) {
		return "", false
	}
	return unescape(raw)
}

// unescape decodes the escapes of a JSON string's content.
func unescape(raw []byte) (string, bool) {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(raw) {
			return "", false
		}
		switch raw[i] {
		case '"', '\\', '/':
			out = append(out, raw[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if i+4 >= len(raw) {
				return "", false
			}
			var r rune
			for _, h := range raw[i+1 : i+5] {
				switch {
				case h >= '0' && h <= '9':
					r = r<<4 | rune(h-'0')
				case h >= 'a' && h <= 'f':
					r = r<<4 | rune(h-'a'+10)
				case h >= 'A' && h <= 'F':
					r = r<<4 | rune(h-'A'+10)
				default:
					return "", false
				}
			}
			if r >= 0xd800 && r < 0xe000 {
				return "", false // a surrogate: encoding/json's pairing rules
			}
			out = utf8.AppendRune(out, r)
			i += 4
		default:
			return "", false
		}
	}
	return string(out), true
}
