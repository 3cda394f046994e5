package hookproto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// checkJSON refuses anything but one JSON object of valid UTF-8, nested
// at most MaxDepth deep, that names no member twice in any object.
// (encoding/json alone would keep the last of two duplicates and replace
// invalid UTF-8 silently.)
func checkJSON(b []byte) error {
	if !utf8.Valid(b) {
		return fmt.Errorf("%w: not valid UTF-8", ErrMalformed)
	}
	type frame struct {
		obj  bool
		key  bool // the next token is a member name
		keys map[string]struct{}
	}
	var st []frame
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	done := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			if !done {
				return fmt.Errorf("%w: empty or truncated input", ErrMalformed)
			}
			return nil
		}
		if err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) {
				return fmt.Errorf("%w: %v at offset %d", ErrMalformed, err, se.Offset)
			}
			return fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		if done {
			return fmt.Errorf("%w: trailing data after the event's JSON object", ErrMalformed)
		}
		if len(st) == 0 && tok != json.Delim('{') {
			return fmt.Errorf("%w: the event is not a JSON object", ErrMalformed)
		}
		if n := len(st); n > 0 && st[n-1].obj && st[n-1].key {
			if tok == json.Delim('}') {
				st = st[:n-1]
			} else {
				k, _ := tok.(string)
				if _, dup := st[n-1].keys[k]; dup {
					return fmt.Errorf("%w: member %q appears twice in one object", ErrMalformed, clip(k, 80))
				}
				st[n-1].keys[k] = struct{}{}
				st[n-1].key = false
				continue
			}
		} else {
			switch tok {
			case json.Delim('{'), json.Delim('['):
				if len(st) >= MaxDepth {
					return fmt.Errorf("%w: nested more than %d deep", ErrMalformed, MaxDepth)
				}
				f := frame{obj: tok == json.Delim('{')}
				if f.obj {
					f.key, f.keys = true, map[string]struct{}{}
				}
				st = append(st, f)
				continue
			case json.Delim('}'), json.Delim(']'):
				st = st[:len(st)-1]
			}
		}
		// A value ended: the enclosing object expects a name next.
		if n := len(st); n > 0 && st[n-1].obj {
			st[n-1].key = true
		}
		if len(st) == 0 {
			done = true
		}
	}
}
