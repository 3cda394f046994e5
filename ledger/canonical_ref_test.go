package ledger_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/opx-dev/opx/ledger"
)

func TestCanonicalize_KnownAnswers(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"b":1,"a":2}`, `{"a":2,"b":1}`},
		{` { "a" : [ 1 , 2 , { } , [ ] ] } `, `{"a":[1,2,{},[]]}`},
		{`"\u00e9\/\u0041"`, `"é/A"`},
		{`"\b\f\n\r\t\"\\"`, `"\b\f\n\r\t\"\\"`},
		{`"\u0001\u001f\u007f"`, "\"\\u0001\\u001f\x7f\""},
		{`"\u2028\u2029"`, "\"\u2028\u2029\""},
		{`"\ud83d\ude00"`, `"😀"`},
		// RFC 8785 sorts by UTF-16 code units: U+1F600 is D83D DE00, which
		// sorts before U+FB33 although its UTF-8 bytes sort after.
		{`{"\ufb33":1,"\ud83d\ude00":2,"a":3,"":4}`, "{\"\":4,\"a\":3,\"\U0001F600\":2,\"\uFB33\":1}"},
		{`-9007199254740991`, `-9007199254740991`},
		{`9007199254740991`, `9007199254740991`},
		{`0`, `0`},
		{`[true,false,null]`, `[true,false,null]`},
		{`{"z":{"y":1,"x":[{"b":0,"a":0}]}}`, `{"z":{"x":[{"a":0,"b":0}],"y":1}}`},
	}
	for _, tt := range tests {
		got, err := ledger.Canonicalize([]byte(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("Canonicalize(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
		if !ledger.IsCanonical([]byte(tt.want)) {
			t.Errorf("IsCanonical(%s) = false", tt.want)
		}
		if tt.in != tt.want && ledger.IsCanonical([]byte(tt.in)) {
			t.Errorf("IsCanonical(%s) = true for non-canonical input", tt.in)
		}
	}
}

func TestCanonicalize_Rejects(t *testing.T) {
	for _, in := range []string{
		`1.0`, `1e2`, `1E2`, `-0`, `0.5`, `9007199254740992`, `-9007199254740992`, `01`, `+1`,
		`{"a":1,"a":2}`, `{"a":{"b":1,"b":1}}`, "\"\xff\"", `"\ud800"`, `"\udc00\ud800"`,
		`{"a":1,}`, `[1,]`, `{`, `"abc`, `nul`, `{"a":1} x`, "\"a\x01\"", `NaN`, `Infinity`,
	} {
		if out, err := ledger.Canonicalize([]byte(in)); err == nil {
			t.Errorf("Canonicalize(%q) = %s, want an error", in, out)
		}
	}
}

func TestMarshalCanonical_RejectsFloats(t *testing.T) {
	if _, err := ledger.MarshalCanonical(map[string]any{"x": 0.5}); err == nil {
		t.Error("MarshalCanonical accepted a float")
	}
	b, err := ledger.MarshalCanonical(struct {
		B int    `json:"b"`
		A string `json:"a"`
	}{1, "<&>"})
	if err != nil || string(b) != `{"a":"<&>","b":1}` {
		t.Errorf("MarshalCanonical = %s, %v", b, err)
	}
}

// TestCanonicalize_MatchesNaiveReference cross-checks the fast
// canonicaliser against a deliberately naive one on random documents,
// valid and broken.
func TestCanonicalize_MatchesNaiveReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 4000
	if testing.Short() {
		n = 500
	}
	for i := 0; i < n; i++ {
		doc := randomJSON(rng, 0)
		if rng.IntN(8) == 0 {
			doc = mutate(rng, doc)
		}
		want, werr := naiveCanonical([]byte(doc))
		got, gerr := ledger.Canonicalize([]byte(doc))
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("doc %q: reference err %v, Canonicalize err %v", doc, werr, gerr)
		}
		if werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("doc %q:\nCanonicalize %s\nreference    %s", doc, got, want)
		}
		if werr == nil && !ledger.IsCanonical(want) {
			t.Fatalf("IsCanonical(%s) = false", want)
		}
	}
}

var keyPool = []string{"a", "b", "A", "aa", "é", "\ufb33", "😀", "z\u0000", "data", "prev", "\u00ff", "\u0100", "", "~"}

func randomString(rng *rand.Rand) string {
	var b strings.Builder
	b.WriteByte('"')
	for n := rng.IntN(6); n > 0; n-- {
		switch rng.IntN(9) {
		case 0:
			fmt.Fprintf(&b, `\u%04x`, rng.IntN(0x20))
		case 1:
			b.WriteString([]string{`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`}[rng.IntN(8)])
		case 2:
			b.WriteString([]string{"é", "\U0001F600", "\u2028", "\uFB33", "\u007f"}[rng.IntN(5)])
		case 3:
			fmt.Fprintf(&b, `\u%04x`, 0x20+rng.IntN(0xd000))
		case 4:
			r := 0x10000 + rng.IntN(0x10000)
			hi, lo := utf16.EncodeRune(rune(r))
			fmt.Fprintf(&b, `\u%04x\u%04X`, hi, lo)
		default:
			b.WriteByte(byte('a' + rng.IntN(26)))
		}
	}
	b.WriteByte('"')
	return b.String()
}

func ws(rng *rand.Rand) string { return []string{"", "", "", " ", "\n", "\t ", "\r\n"}[rng.IntN(7)] }

func randomJSON(rng *rand.Rand, depth int) string {
	k := rng.IntN(10)
	if depth > 3 {
		k = 5 + rng.IntN(5)
	}
	switch k {
	case 0, 1:
		var parts []string
		used := map[string]bool{}
		for n := rng.IntN(5); n > 0; n-- {
			key := keyPool[rng.IntN(len(keyPool))]
			if used[key] {
				continue
			}
			used[key] = true
			kq, _ := json.Marshal(key)
			parts = append(parts, ws(rng)+string(kq)+ws(rng)+":"+ws(rng)+randomJSON(rng, depth+1)+ws(rng))
		}
		return "{" + strings.Join(parts, ",") + ws(rng) + "}"
	case 2, 3:
		var parts []string
		for n := rng.IntN(4); n > 0; n-- {
			parts = append(parts, ws(rng)+randomJSON(rng, depth+1)+ws(rng))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case 4, 5:
		return randomString(rng)
	case 6, 7:
		switch rng.IntN(4) {
		case 0:
			return strconv.FormatInt(rng.Int64N(ledger.MaxSafeInteger+1)*[]int64{1, -1}[rng.IntN(2)], 10)
		default:
			return strconv.Itoa(rng.IntN(2000) - 1000)
		}
	default:
		return []string{"true", "false", "null"}[rng.IntN(3)]
	}
}

// mutate breaks a document in one of the ways the profile forbids.
func mutate(rng *rand.Rand, doc string) string {
	switch rng.IntN(5) {
	case 0:
		return `{"x":1.5,"y":` + doc + `}`
	case 1:
		return `{"k":` + doc + `,"k":0}`
	case 2:
		return `[` + doc + `,9007199254740992]`
	case 3:
		return doc + " 1"
	default:
		return `["` + "\xc3" + `",` + doc + `]`
	}
}

// naiveCanonical is the reference: a token-by-token decode into a tree
// with duplicate detection, then JCS serialisation written out plainly.
func naiveCanonical(src []byte) ([]byte, error) {
	if !utf8.Valid(src) {
		return nil, errors.New("invalid utf-8")
	}
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	v, err := naiveValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data")
	}
	var out bytes.Buffer
	naiveWrite(&out, v)
	return out.Bytes(), nil
}

type naiveMember struct {
	key string
	val any
}

func naiveValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			var ms []naiveMember
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string)
				if seen[k] {
					return nil, errors.New("duplicate key")
				}
				seen[k] = true
				v, err := naiveValue(dec)
				if err != nil {
					return nil, err
				}
				ms = append(ms, naiveMember{k, v})
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return ms, nil
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := naiveValue(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return arr, nil
		}
		return nil, errors.New("unexpected delimiter")
	case json.Number:
		s := string(t)
		if strings.ContainsAny(s, ".eE") || s == "-0" {
			return nil, errors.New("not an integer")
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n > ledger.MaxSafeInteger || n < -ledger.MaxSafeInteger {
			return nil, errors.New("out of range")
		}
		return n, nil
	case string:
		if strings.ContainsRune(t, utf8.RuneError) {
			return nil, errors.New("unpaired surrogate or replacement character")
		}
		return t, nil
	default:
		return t, nil // bool or nil
	}
}

func naiveWrite(out *bytes.Buffer, v any) {
	switch t := v.(type) {
	case []naiveMember:
		sort.Slice(t, func(i, j int) bool {
			a, b := utf16.Encode([]rune(t[i].key)), utf16.Encode([]rune(t[j].key))
			for k := 0; k < len(a) && k < len(b); k++ {
				if a[k] != b[k] {
					return a[k] < b[k]
				}
			}
			return len(a) < len(b)
		})
		out.WriteByte('{')
		for i, m := range t {
			if i > 0 {
				out.WriteByte(',')
			}
			naiveString(out, m.key)
			out.WriteByte(':')
			naiveWrite(out, m.val)
		}
		out.WriteByte('}')
	case []any:
		out.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				out.WriteByte(',')
			}
			naiveWrite(out, e)
		}
		out.WriteByte(']')
	case string:
		naiveString(out, t)
	case int64:
		out.WriteString(strconv.FormatInt(t, 10))
	case bool:
		out.WriteString(strconv.FormatBool(t))
	case nil:
		out.WriteString("null")
	}
}

func naiveString(out *bytes.Buffer, s string) {
	out.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			out.WriteString(`\"`)
		case '\\':
			out.WriteString(`\\`)
		case '\b':
			out.WriteString(`\b`)
		case '\f':
			out.WriteString(`\f`)
		case '\n':
			out.WriteString(`\n`)
		case '\r':
			out.WriteString(`\r`)
		case '\t':
			out.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(out, `\u%04x`, r)
			} else {
				out.WriteRune(r)
			}
		}
	}
	out.WriteByte('"')
}
