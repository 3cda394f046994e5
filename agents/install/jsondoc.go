package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// maxDepth bounds the nesting of a settings document: the decoder is
// recursive, and no CLI's settings nest more than a handful of levels.
const maxDepth = 256

// An object is a JSON object that keeps its members in the order the file
// had them, so that a rewrite changes only what opx changed. Values are
// *object, []any, json.Number, string, bool or nil.
type object struct {
	members []member
}

type member struct {
	key string
	val any
}

// get returns the value of key and whether it is there.
func (o *object) get(key string) (any, bool) {
	for _, m := range o.members {
		if m.key == key {
			return m.val, true
		}
	}
	return nil, false
}

// set replaces the value of key, or appends key at the end.
func (o *object) set(key string, val any) {
	for i, m := range o.members {
		if m.key == key {
			o.members[i].val = val
			return
		}
	}
	o.members = append(o.members, member{key, val})
}

// del removes key.
func (o *object) del(key string) {
	for i, m := range o.members {
		if m.key == key {
			o.members = append(o.members[:i], o.members[i+1:]...)
			return
		}
	}
}

// obj builds an object from key, value pairs.
func obj(kv ...any) *object {
	o := &object{}
	for i := 0; i+1 < len(kv); i += 2 {
		o.members = append(o.members, member{kv[i].(string), kv[i+1]})
	}
	return o
}

// parseDocument decodes a settings file: one JSON object, valid UTF-8, no
// duplicate member names (a rewrite would silently keep one), nested at
// most maxDepth deep, nothing after it. A file of only white space is an
// empty object (a settings file just created with touch). Comments are
// refused like any other syntax error: rewriting would drop them.
func parseDocument(b []byte) (*object, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return &object{}, nil
	}
	if !utf8.Valid(b) {
		return nil, errors.New("not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, explainSyntax(b, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more after the JSON object")
	}
	o, ok := v.(*object)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	return o, nil
}

// explainSyntax adds, to a syntax error in a file that holds comments,
// that opx does not rewrite files with comments.
func explainSyntax(b []byte, err error) error {
	if bytes.Contains(b, []byte("//")) || bytes.Contains(b, []byte("/*")) {
		return fmt.Errorf("%w (if it holds comments: opx does not rewrite a settings file with comments, it would lose them; remove them or add the hooks by hand)", err)
	}
	return err
}

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested more than %d deep", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &object{}
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, ok := kt.(string)
				if !ok {
					return nil, fmt.Errorf("object key %v is not a string", kt)
				}
				if seen[k] {
					return nil, fmt.Errorf("member %q appears twice in one object", k)
				}
				seen[k] = true
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				o.members = append(o.members, member{k, v})
			}
			if _, err := dec.Token(); err != nil { // '}'
				return nil, err
			}
			return o, nil
		case '[':
			a := []any{}
			for dec.More() {
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			if _, err := dec.Token(); err != nil { // ']'
				return nil, err
			}
			return a, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return t, nil // string, json.Number, bool, nil
	}
}

// encodeDocument writes o as the CLIs write their own settings
// (JSON.stringify(v, null, 2)): two-space indentation, members in order,
// no HTML escaping, a final newline.
func encodeDocument(o *object) []byte {
	var b bytes.Buffer
	encodeValue(&b, o, "")
	b.WriteByte('\n')
	return b.Bytes()
}

func encodeValue(b *bytes.Buffer, v any, indent string) {
	switch x := v.(type) {
	case *object:
		if len(x.members) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, m := range x.members {
			b.WriteString(indent + "  ")
			encodeString(b, m.key)
			b.WriteString(": ")
			encodeValue(b, m.val, indent+"  ")
			if i < len(x.members)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "}")
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, e := range x {
			b.WriteString(indent + "  ")
			encodeValue(b, e, indent+"  ")
			if i < len(x)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(indent + "]")
	case string:
		encodeString(b, x)
	case json.Number:
		b.WriteString(x.String())
	case int:
		fmt.Fprintf(b, "%d", x)
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case nil:
		b.WriteString("null")
	default:
		panic(fmt.Sprintf("install: cannot encode %T", v))
	}
}

func encodeString(b *bytes.Buffer, s string) {
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	b.WriteString(strings.TrimSuffix(sb.String(), "\n"))
}
