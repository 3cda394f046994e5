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

// TestCanonicalize_RandomRenderings builds random JSON trees, writes each
// in many non-canonical ways (members shuffled, random white space,
// characters escaped as \u sequences in either case, '/' escaped) and
// checks that every rendering canonicalises to the one form written by the
// naive reference serialiser (naiveWrite), that the form is canonical,
// that it decodes back to the same tree, and that a rendering that differs
// from it is never reported canonical.
func TestCanonicalize_RandomRenderings(t *testing.T) {
	rng := rand.New(rand.NewPCG(8785, 2026))
	docs := 500
	if testing.Short() {
		docs = 100
	}
	for i := 0; i < docs; i++ {
		tree := randomTree(rng, 0)
		var want bytes.Buffer
		naiveWrite(&want, cloneTree(tree))
		if !ledger.IsCanonical(want.Bytes()) {
			t.Fatalf("reference output %s is not canonical", want.Bytes())
		}
		var back any
		if err := json.Unmarshal(want.Bytes(), &back); err != nil {
			t.Fatalf("reference output %s does not decode: %v", want.Bytes(), err)
		}
		for j := 0; j < 3; j++ {
			var in bytes.Buffer
			render(rng, &in, tree)
			got, err := ledger.Canonicalize(in.Bytes())
			if err != nil || !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("rendering %q\nCanonicalize %s, %v\nreference    %s", in.Bytes(), got, err, want.Bytes())
			}
			if !bytes.Equal(in.Bytes(), want.Bytes()) && ledger.IsCanonical(in.Bytes()) {
				t.Fatalf("IsCanonical(%q) = true, canonical form is %s", in.Bytes(), want.Bytes())
			}
		}
	}
}

var treeRunes = []rune{'a', 'b', 'z', 'A', '0', ' ', '"', '\\', '/', '\b', '\f', '\n', '\r', '\t', 0, 0x1f, 0x7f,
	0xe9, 0xff, 0x100, 0x2028, 0xd7ff, 0xe000, 0xfb33, 0xfeff, 0xfffd, 0xffff, 0x10000, 0x1f600, 0x10ffff}

func randomText(rng *rand.Rand) string {
	var b strings.Builder
	for n := rng.IntN(5); n > 0; n-- {
		b.WriteRune(treeRunes[rng.IntN(len(treeRunes))])
	}
	return b.String()
}

// randomTree returns a tree of the reference's types: []naiveMember,
// []any, string, int64, bool and nil, with unique keys.
func randomTree(rng *rand.Rand, depth int) any {
	k := rng.IntN(10)
	if depth >= 4 {
		k = 4 + rng.IntN(6)
	}
	switch k {
	case 0, 1:
		var ms []naiveMember
		seen := map[string]bool{}
		for n := rng.IntN(6); n > 0; n-- {
			key := randomText(rng)
			if seen[key] {
				continue
			}
			seen[key] = true
			ms = append(ms, naiveMember{key, randomTree(rng, depth+1)})
		}
		if ms == nil {
			ms = []naiveMember{}
		}
		return ms
	case 2, 3:
		arr := []any{}
		for n := rng.IntN(4); n > 0; n-- {
			arr = append(arr, randomTree(rng, depth+1))
		}
		return arr
	case 4, 5:
		return randomText(rng)
	case 6, 7:
		switch rng.IntN(3) {
		case 0:
			return rng.Int64N(2*ledger.MaxSafeInteger+1) - ledger.MaxSafeInteger
		case 1:
			return []int64{0, 1, -1, ledger.MaxSafeInteger, -ledger.MaxSafeInteger}[rng.IntN(5)]
		default:
			return int64(rng.IntN(200) - 100)
		}
	default:
		return []any{true, false, nil}[rng.IntN(3)]
	}
}

// cloneTree copies the object member slices, which naiveWrite sorts in
// place, so renderings keep their own order.
func cloneTree(v any) any {
	switch t := v.(type) {
	case []naiveMember:
		out := make([]naiveMember, len(t))
		for i, m := range t {
			out[i] = naiveMember{m.key, cloneTree(m.val)}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = cloneTree(e)
		}
		return out
	}
	return v
}

func randomSpace(rng *rand.Rand) string {
	return []string{"", "", "", " ", "\t", "\n", "\r\n", "  \n\t"}[rng.IntN(8)]
}

// render writes v as valid, usually non-canonical JSON.
func render(rng *rand.Rand, b *bytes.Buffer, v any) {
	b.WriteString(randomSpace(rng))
	switch t := v.(type) {
	case []naiveMember:
		b.WriteByte('{')
		for i, j := range rng.Perm(len(t)) {
			if i > 0 {
				b.WriteString(randomSpace(rng) + "," + randomSpace(rng))
			}
			renderString(rng, b, t[j].key)
			b.WriteString(randomSpace(rng) + ":")
			render(rng, b, t[j].val)
		}
		b.WriteString(randomSpace(rng) + "}")
	case []any:
		b.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				b.WriteByte(',')
			}
			render(rng, b, e)
		}
		b.WriteString(randomSpace(rng) + "]")
	case string:
		renderString(rng, b, t)
	case int64:
		b.WriteString(strconv.FormatInt(t, 10))
	case bool:
		b.WriteString(strconv.FormatBool(t))
	case nil:
		b.WriteString("null")
	}
	b.WriteString(randomSpace(rng))
}

func renderString(rng *rand.Rand, b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for _, r := range s {
		hexFmt := []string{`\u%04x`, `\u%04X`}[rng.IntN(2)]
		switch {
		case rng.IntN(4) == 0: // any character may be escaped
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(b, hexFmt, u)
			}
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '/' && rng.IntN(2) == 0:
			b.WriteString(`\/`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			fmt.Fprintf(b, hexFmt, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}
