package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestScanID(t *testing.T) {
	num := func(n int64) jsonrpc.ID { id, _ := jsonrpc.MakeID(float64(n)); return id }
	str := func(s string) jsonrpc.ID { id, _ := jsonrpc.MakeID(s); return id }
	tests := []struct {
		name string
		msg  string
		want jsonrpc.ID
		ok   bool
	}{
		{"First", `{"jsonrpc":"2.0","id":7,"result":{}}`, num(7), true},
		{"Last", `{"result":{"content":[{"type":"text","text":"x"}]},"jsonrpc":"2.0","id":12}`, num(12), true},
		{"LastNoSpace", `{"result":1,"id":12}`, num(12), true},
		{"Spaces", "{ \"id\" :\t \"opx-3\" , \"result\": null }", str("opx-3"), true},
		{"Negative", `{"id":-4}`, num(-4), true},
		{"EscapedString", `{"id":"a\"b\\c\u0041"}`, str("a\"b\\cA"), true},
		{"NestedIDIgnored", `{"result":{"id":99,"x":[{"id":98}]},"id":5}`, num(5), true},
		{"IDInStringIgnored", `{"result":"{\"id\":99}","id":5}`, num(5), true},
		{"KeyLikeValueIgnored", `{"method":"id","params":{"id":3}}`, jsonrpc.ID{}, false},
		{"NullID", `{"id":null,"result":1}`, jsonrpc.ID{}, false},
		{"ObjectID", `{"id":{"a":1},"result":1}`, jsonrpc.ID{}, false},
		{"FloatID", `{"id":1.5}`, jsonrpc.ID{}, false},
		{"TwoDifferent", `{"id":1,"id":2}`, jsonrpc.ID{}, false},
		{"TwoSame", `{"id":1,"result":0,"id":1}`, num(1), true},
		{"Array", `[{"id":1}]`, jsonrpc.ID{}, false},
		{"TruncatedAfterID", `{"jsonrpc":"2.0","id":8,"result":{"content":[{"text":"cut`, num(8), true},
		{"TruncatedInID", `{"id":"opx-`, jsonrpc.ID{}, false},
		{"LongID", `{"id":"` + strings.Repeat("x", 100) + `"}`, jsonrpc.ID{}, false},
		{"LongKey", `{"` + strings.Repeat("i", 100) + `":1,"id":2}`, num(2), true},
		{"Garbage", "\x00\xff{{{\"id\":", jsonrpc.ID{}, false},
		{"Empty", ``, jsonrpc.ID{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := scanID([]byte(tt.msg))
			if ok != tt.ok || (ok && got != tt.want) {
				t.Errorf("scanID(%q) = %v %v, want %v %v", tt.msg, got.Raw(), ok, tt.want.Raw(), tt.ok)
			}
			// Fed byte by byte, the same.
			var s idScanner
			for i := 0; i < len(tt.msg); i++ {
				s.Write([]byte{tt.msg[i]})
			}
			s.finish()
			got2, ok2 := s.ID()
			if ok2 != ok || got2 != got {
				t.Errorf("byte by byte: %v %v, at once: %v %v", got2.Raw(), ok2, got.Raw(), ok)
			}
		})
	}
}

// FuzzScanID cross-checks the scanner with encoding/json: for any
// message that decodes to an object with an integer or string id, the
// scanner finds that id, whatever the chunking; it never panics.
func FuzzScanID(f *testing.F) {
	for _, s := range []string{`{"id":1}`, `{"result":{"id":2},"id":"x"}`, `{"a":"\"id\":3","id":4}`, `[{"id":1}]`, `{"id":`} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, msg []byte, chunk uint8) {
		var s idScanner
		step := int(chunk)%16 + 1
		for i := 0; i < len(msg); i += step {
			s.Write(msg[i:min(i+step, len(msg))])
		}
		s.finish()
		got, ok := s.ID()
		var v map[string]json.RawMessage
		if json.Unmarshal(msg, &v) != nil {
			return
		}
		raw, has := v["id"]
		if !has || strings.Count(string(msg), `"id"`) > 1 {
			return // duplicate keys and escaped spellings: not compared
		}
		var want any
		if json.Unmarshal(raw, &want) != nil {
			return
		}
		switch w := want.(type) {
		case string:
			if len(raw) > maxIDBytes {
				return
			}
			if id, _ := jsonrpc.MakeID(w); !ok || got != id {
				t.Errorf("%q: got %v %v, want %q", msg, got.Raw(), ok, w)
			}
		case float64:
			if w != float64(int64(w)) || strings.ContainsAny(string(raw), ".eE") || len(raw) > 18 {
				return
			}
			if id, _ := jsonrpc.MakeID(w); !ok || got != id {
				t.Errorf("%q: got %v %v, want %v", msg, got.Raw(), ok, w)
			}
		}
	})
}
