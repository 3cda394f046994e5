package ledger_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/opx-dev/opx/ledger"
)

func TestCanonicalize_KnownAnswers(t *testing.T) {
	tests := []struct{ in, want string }{
		// Structure: white space dropped, members sorted at every depth.
		{`{"b":1,"a":2}`, `{"a":2,"b":1}`},
		{` { "a" : [ 1 , 2 , { } , [ ] ] } `, `{"a":[1,2,{},[]]}`},
		{" \t\r\n{ \"b\" :\t[ 1 ,\n2 ] ,\r\"a\" : { } } \n", `{"a":{},"b":[1,2]}`},
		{`[[[[]]],{},[{}]]`, `[[[[]]],{},[{}]]`},
		{`{"a":{"c":[{"z":1,"y":[{"q":null,"p":true}]}],"b":false}}`, `{"a":{"b":false,"c":[{"y":[{"p":true,"q":null}],"z":1}]}}`},
		{`{"b":1,"a":{"b":1,"a":2}}`, `{"a":{"a":2,"b":1},"b":1}`},
		{`{"\u0062":1,"a":2}`, `{"a":2,"b":1}`}, // sorted by the decoded key
		// RFC 8785 sorts by UTF-16 code units: U+1F600 is D83D DE00, which
		// sorts before U+FB33 although its UTF-8 bytes sort after.
		{`{"\ufb33":1,"\ud83d\ude00":2,"a":3,"":4}`, "{\"\":4,\"a\":3,\"\U0001F600\":2,\"\uFB33\":1}"},
		// Scalars.
		{`[0,-1,1,-9007199254740991,9007199254740991]`, `[0,-1,1,-9007199254740991,9007199254740991]`},
		{`[true,false,null]`, `[true,false,null]`},
		{`null`, `null`},
		// Strings: only '"', '\\' and control characters are escaped, the
		// five with a short form in it; everything else is UTF-8.
		{`""`, `""`},
		{`" \t "`, `" \t "`}, // white space inside a string is kept
		{`"\b\f\n\r\t\"\\"`, `"\b\f\n\r\t\"\\"`},
		{`"\u0022\u005C\u005c"`, `"\"\\\\"`},
		{`"\u0001\u001f\u007f"`, "\"\\u0001\\u001f\x7f\""},
		{`"\u007F"`, "\"\x7f\""}, // DEL is not a control character for JCS
		{`"a/b"`, `"a/b"`},
		{`"\u00e9\/\u0041"`, `"é/A"`}, // '/' is never escaped
		{`"\u00E9"`, "\"\u00e9\""},
		{"\"\u00e9\"", "\"\u00e9\""},
		{`"\u20ac\u2028\u2029\ufeff"`, "\"\u20ac\u2028\u2029\ufeff\""},
		{`"\ud83d\ude00"`, `"😀"`},
		{`"\uD83D\uDE00"`, `"😀"`},
		{`"\udbff\udfff"`, "\"\U0010FFFF\""},
		{`"\uFFFD"`, "\"\uFFFD\""}, // an escaped replacement character is a character
		{`"<&>"`, `"<&>"`},
		{`"\u003c\u0026\u003e"`, `"<&>"`},
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

// TestCanonicalize_ControlCharacters pins the escape of every character
// below U+0020: the five with a short JCS escape use it, the rest are
// \u00xx in lowercase hex, whatever case the input used.
func TestCanonicalize_ControlCharacters(t *testing.T) {
	want := [0x20]string{
		`\u0000`, `\u0001`, `\u0002`, `\u0003`, `\u0004`, `\u0005`, `\u0006`, `\u0007`,
		`\b`, `\t`, `\n`, `\u000b`, `\f`, `\r`, `\u000e`, `\u000f`,
		`\u0010`, `\u0011`, `\u0012`, `\u0013`, `\u0014`, `\u0015`, `\u0016`, `\u0017`,
		`\u0018`, `\u0019`, `\u001a`, `\u001b`, `\u001c`, `\u001d`, `\u001e`, `\u001f`,
	}
	for c := 0; c < 0x20; c++ {
		for _, in := range []string{fmt.Sprintf(`"\u%04x"`, c), fmt.Sprintf(`"\u%04X"`, c)} {
			got, err := ledger.Canonicalize([]byte(in))
			if err != nil || string(got) != `"`+want[c]+`"` {
				t.Errorf("Canonicalize(%s) = %s, %v; want %q", in, got, err, `"`+want[c]+`"`)
			}
		}
		// A raw control character is not JSON.
		if _, err := ledger.Canonicalize([]byte{'"', byte(c), '"'}); err == nil {
			t.Errorf("Canonicalize accepted a raw U+%04X in a string", c)
		}
	}
}

// TestCanonicalize_KeyOrder checks RFC 8785 member order: by UTF-16 code
// units, which differs from UTF-8 byte order once a key holds a
// supplementary-plane character (a surrogate pair, 0xD800-0xDBFF first)
// and another a BMP character above U+DFFF.
func TestCanonicalize_KeyOrder(t *testing.T) {
	// In UTF-16 order. In UTF-8 byte order U+10000 and U+1F600 (F0 ..)
	// would sort after U+E000, U+FB33 and U+FFFF (EE .., EF ..).
	sorted := []string{
		"", "\u0000", "\u001f", " ", "A", "Z", "_", "a", "a\u0000", "aa", "b", "\u007f", "\u0080",
		"\u00e9", "\u00ff", "\u0100", "\u0800", "\ud7ff",
		"\U00010000", "\U0001F600", "\U0001F601", "\U0010FFFF",
		"\ue000", "\ufb33", "\uffff",
	}
	var in, want bytes.Buffer
	in.WriteString("{")
	want.WriteString("{")
	for i := range sorted {
		k := sorted[len(sorted)-1-i] // reversed, escaped as \u sequences
		if i > 0 {
			in.WriteString(" , ")
		}
		in.WriteString(`"`)
		for _, u := range utf16.Encode([]rune(k)) {
			fmt.Fprintf(&in, `\u%04X`, u)
		}
		fmt.Fprintf(&in, `" : %d`, i)
	}
	in.WriteString("}")
	for i, k := range sorted {
		if i > 0 {
			want.WriteString(",")
		}
		kq := canonString(k)
		fmt.Fprintf(&want, "%s:%d", kq, len(sorted)-1-i)
	}
	want.WriteString("}")
	got, err := ledger.Canonicalize(in.Bytes())
	if err != nil || got == nil || !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("Canonicalize(%s)\n got %q, %v\nwant %q", in.Bytes(), got, err, want.Bytes())
	}
	if !ledger.IsCanonical(want.Bytes()) {
		t.Error("IsCanonical(sorted object) = false")
	}
}

// canonString is the JCS form of s for test expectations; s must not
// need escapes other than the control characters.
func canonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		if r < 0x20 {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

// TestCanonicalize_Nesting: deep nesting is fine up to the limit and
// refused (not a stack overflow) beyond it.
func TestCanonicalize_Nesting(t *testing.T) {
	deep := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	if got, err := ledger.Canonicalize([]byte(deep)); err != nil || string(got) != deep {
		t.Errorf("100 nested arrays: %v", err)
	}
	hostile := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	if _, err := ledger.Canonicalize([]byte(hostile)); err == nil {
		t.Error("100000 nested arrays accepted")
	}
}

func TestCanonicalize_Rejects(t *testing.T) {
	for name, in := range map[string]string{
		"negative zero":            `-0`,
		"negative zero nested":     `{"a":[1,-0]}`,
		"fraction":                 `1.0`,
		"fraction nested":          `{"a":{"b":0.5}}`,
		"exponent":                 `1e2`,
		"exponent upper":           `1E2`,
		"exponent signed":          `1e+2`,
		"zero exponent":            `0e0`,
		"2^53":                     `9007199254740992`,
		"-2^53":                    `-9007199254740992`,
		"2^64":                     `18446744073709551616`,
		"huge":                     `123456789012345678901234567890`,
		"leading zero":             `01`,
		"negative leading zero":    `-01`,
		"plus":                     `+1`,
		"bare minus":               `-`,
		"leading dot":              `.5`,
		"trailing dot":             `1.`,
		"hex":                      `0x10`,
		"duplicate":                `{"a":1,"a":1}`,
		"duplicate escaped":        `{"a":1,"\u0061":2}`,
		"duplicate unsorted":       `{"b":1,"a":1,"b":2}`,
		"duplicate nested":         `[{"x":{"k":1,"k":2}}]`,
		"duplicate empty key":      `{"":1,"":2}`,
		"invalid utf-8":            "\"\xc3\x28\"",
		"invalid utf-8 key":        "{\"\xff\":1}",
		"overlong utf-8":           "\"\xc0\xaf\"",
		"utf-8 surrogate":          "\"\xed\xa0\x80\"",
		"truncated utf-8":          "\"\xe2\x82\"",
		"lone high surrogate":      `"\ud800"`,
		"lone low surrogate":       `"\udc00"`,
		"high then letter":         `"\ud800\u0041"`,
		"high then high":           `"\ud800\ud800"`,
		"low then high":            `"\udc00\ud800"`,
		"short escape":             `"\u12"`,
		"bad escape":               `"\x41"`,
		"single quotes":            `'a'`,
		"unquoted key":             `{a:1}`,
		"trailing comma":           `[1,2,]`,
		"missing colon":            `{"a" 1}`,
		"form feed as space":       "[\f1]",
		"nbsp as space":            "[\u00a01]",
		"two values":               `1 2`,
		"trailing garbage":         `{}x`,
		"empty":                    ``,
		"only space":               ` `,
		"capitalised literal":      `True`,
		"truncated literal":        `nul`,
		"unterminated":             `"abc`,
		"unterminated object":      `{"a":1`,
		"unterminated array":       `[1`,
		"comment":                  `[1/*x*/]`,
		"byte order mark":          "\ufeff{}",
		"raw newline in string":    "\"a\nb\"",
		"NaN":                      `NaN`,
		"minus Infinity":           `-Infinity`,
		"backslash at end":         `"\`,
		"escape cut in a member":   `{"\u00`,
		"trailing comma in object": `{"a":1,}`,
		"Infinity":                 `Infinity`,
	} {
		if out, err := ledger.Canonicalize([]byte(in)); err == nil {
			t.Errorf("%s: Canonicalize(%q) = %s, want an error", name, in, out)
		}
		if ledger.IsCanonical([]byte(in)) {
			t.Errorf("%s: IsCanonical(%q) = true", name, in)
		}
	}
}

func TestIsCanonical(t *testing.T) {
	for in, want := range map[string]bool{
		`{"a":1,"b":[true,null,"x"]}`: true,
		`{"b":1,"a":1}`:               false,
		`{"a":1} `:                    false,
		" {\"a\":1}":                  false,
		"{\"a\":1}\n":                 false,
		`{"a": 1}`:                    false,
		`"\/"`:                        false,
		`"/"`:                         true,
		`"\u00e9"`:                    false,
		"\"\u00e9\"":                  true,
		`"\u001F"`:                    false,
		`"\u001f"`:                    true,
		`"\u000a"`:                    false,
		`"\n"`:                        true,
		`-0`:                          false,
		`0`:                           true,
		`1.0`:                         false,
		"\"\U0001F600\"":              true,
		`"\ud83d\ude00"`:              false,
	} {
		if got := ledger.IsCanonical([]byte(in)); got != want {
			t.Errorf("IsCanonical(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestMarshalCanonical(t *testing.T) {
	type inner struct {
		Z int    `json:"z"`
		A string `json:"a"`
	}
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"struct fields sorted", struct {
			B inner          `json:"b"`
			A map[string]int `json:"a"`
		}{inner{1, "x"}, map[string]int{"y": 2, "x": 1}}, `{"a":{"x":1,"y":2},"b":{"a":"x","z":1}}`},
		{"html not escaped", map[string]string{"s": "<a href='x'>&</a>"}, `{"s":"<a href='x'>&</a>"}`},
		{"u2028 not escaped", map[string]string{"s": "\u2028"}, "{\"s\":\"\u2028\"}"},
		{"control escaped", map[string]string{"s": "\x01\x1f\t"}, `{"s":"\u0001\u001f\t"}`},
		{"largest safe integers", map[string]int64{"max": ledger.MaxSafeInteger, "min": -ledger.MaxSafeInteger}, `{"max":9007199254740991,"min":-9007199254740991}`},
		{"bytes are base64", map[string][]byte{"b": {0, 1, 2}}, `{"b":"AAEC"}`},
		{"raw message canonicalised", map[string]json.RawMessage{"r": json.RawMessage(`{ "b":1, "a":2 }`)}, `{"r":{"a":2,"b":1}}`},
		{"supplementary key order", map[string]int{"\uFB33": 1, "\U0001F600": 2}, "{\"\U0001F600\":2,\"\uFB33\":1}"},
		{"nil map", map[string]any(nil), `null`},
		{"array", []int{3, 1, 2}, `[3,1,2]`},
	}
	for _, tt := range tests {
		got, err := ledger.MarshalCanonical(tt.v)
		if err != nil || string(got) != tt.want {
			t.Errorf("%s: MarshalCanonical = %s, %v; want %s", tt.name, got, err, tt.want)
		}
	}
	for name, v := range map[string]any{
		"fraction":         map[string]float64{"f": 0.5},
		"large float":      map[string]float64{"f": 1e21},
		"2^53":             map[string]int64{"n": ledger.MaxSafeInteger + 1},
		"-2^53":            map[string]int64{"n": -ledger.MaxSafeInteger - 1},
		"uint64 max":       map[string]uint64{"n": 1<<64 - 1},
		"json.Number frac": map[string]json.Number{"n": "1.5"},
		"json.Number exp":  map[string]json.Number{"n": "1e3"},
		"raw duplicate":    json.RawMessage(`{"a":1,"a":2}`),
		"channel":          map[string]any{"c": make(chan int)},
	} {
		if got, err := ledger.MarshalCanonical(v); err == nil {
			t.Errorf("%s: MarshalCanonical = %s, want an error", name, got)
		}
	}
}
