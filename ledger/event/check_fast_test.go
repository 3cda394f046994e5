package event_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/opx-dev/opx/internal/race"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// checkInput is one payload of one entry type.
type checkInput struct {
	typ  string
	data []byte
}

// sameAsReference fails t unless the fast path and encoding/json agree on
// data: when the fast path accepts, encoding/json decodes the same bytes
// without error to a deeply equal payload (with strings copied and with
// strings sharing data), and Check gives the reference's verdict and
// error. It returns whether the fast path accepted.
func sameAsReference(t testing.TB, typ string, data []byte) bool {
	t.Helper()
	ref, refErr := event.DecodeJSON(typ, data)
	fast, ok := event.FastDecode(typ, data, false)
	aliased, aliasOK := event.FastDecode(typ, data, true)
	if ok != aliasOK {
		t.Fatalf("%s %q: fast path accepts %v copying strings, %v sharing them", typ, data, ok, aliasOK)
	}
	if ok {
		if refErr != nil {
			t.Fatalf("%s %q: fast path accepts what encoding/json refuses: %v", typ, data, refErr)
		}
		if !reflect.DeepEqual(fast, ref) || !reflect.DeepEqual(aliased, ref) {
			t.Fatalf("%s %q: fast path decodes\n%#v\nencoding/json\n%#v", typ, data, fast, ref)
		}
	}
	got, want := event.Check(typ, data), event.Reference(typ, data)
	if (got == nil) != (want == nil) || got != nil && got.Error() != want.Error() {
		t.Fatalf("%s %q: Check says %v, the reference %v", typ, data, got, want)
	}
	return ok
}

// fixturePayloads returns the payload of every entry of the sample ledger
// and of the generator's broken ledgers (fixtures/ledgers), which hold
// every kind of entry the engine writes.
func fixturePayloads(t testing.TB) []checkInput {
	t.Helper()
	dir := filepath.Join("..", "..", "fixtures", "ledgers")
	var out []checkInput
	add := func(r *bufio.Reader) {
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var e struct {
				Type string          `json:"type"`
				Data json.RawMessage `json:"data"`
			}
			if json.Unmarshal(sc.Bytes(), &e) == nil && e.Type != "" {
				out = append(out, checkInput{e.Type, e.Data})
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(filepath.Join(dir, "sample.jsonl.zst"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	add(bufio.NewReader(zr))
	broken, err := filepath.Glob(filepath.Join(dir, "broken", "*.jsonl"))
	if err != nil || len(broken) == 0 {
		t.Fatalf("no broken ledgers: %v", err)
	}
	for _, p := range broken {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		add(bufio.NewReader(bytes.NewReader(b)))
	}
	return out
}

// sampleInputs returns every sample payload, marshalled as the engine
// does, and every type's payload with every member filled.
func sampleInputs(t *testing.T) []checkInput {
	t.Helper()
	var out []checkInput
	for _, p := range samples {
		b, err := ledger.MarshalCanonical(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, checkInput{p.Type(), b})
	}
	for _, typ := range event.Types() {
		p, _ := event.New(typ)
		fillAll(reflect.ValueOf(p))
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, checkInput{typ, b})
	}
	return out
}

// fillAll gives every member reachable in v a non-zero value (two-element
// slices), so that every field of every type is written.
func fillAll(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("s\u00e9<\"\\\n")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(-7)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(7)
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fillAll(v.Elem())
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fillAll(v.Field(i))
			}
		}
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		fillAll(s.Index(0))
		fillAll(s.Index(1))
		v.Set(s)
	}
}

// leafVariants replace one value: other kinds, numbers at and beyond
// every edge, nulls, strings with every escape and invalid bytes.
var leafVariants = []string{
	`null`, `true`, `false`, `0`, `-0`, `1`, `-1`, `01`, `1.0`, `1e2`, `1E2`, `-`, `2147483647`, `2147483648`,
	`-2147483649`, `4294967295`, `4294967296`, `999999999999999999`, `-999999999999999999`, `9999999999999999999`,
	`9223372036854775808`, `18446744073709551615`, `18446744073709551616`, `""`, `"x"`, `"\u00e9"`, `"é"`,
	`"\ud83d\ude00"`, `"\ud800"`, `"\udc00x"`, `"a\u0000b"`, `"\/\b\f\n\r\t\"\\"`, `"\x"`, `"\u12"`, "\"\xff\"",
	"\"a\x01\"", "\"\x1f\"", "\"\x7f\"", `"` + strings.Repeat("ab", 32) + `"`, `[]`, `[1]`, `["a","b"]`, `[null]`, `[{}]`, `{}`,
	`{"a":1}`, `[`, `{`, `"`, ``,
}

// variants returns data changed in one place at a time: each value (at
// any depth) replaced by each leafVariant, each key in case variants, with
// an escape, the Kelvin sign or twice, a member added or dropped, space
// around everything, and odd endings.
func variants(data []byte) [][]byte {
	var out [][]byte
	out = append(out, valueVariants(data, 0)...)
	for _, s := range []string{" ", "\n", "}", "]", " x", "{}", ",", "\x00"} {
		out = append(out, append(append([]byte{}, data...), s...))
	}
	out = append(out, append([]byte("\ufeff"), data...), append([]byte(" \t\r\n"), data...))
	for i := 0; i <= len(data) && i < 4096; i++ {
		out = append(out, data[:i])
	}
	return out
}

type member struct {
	key string
	raw []byte
}

func valueVariants(raw []byte, depth int) [][]byte {
	var out [][]byte
	for _, v := range leafVariants {
		out = append(out, []byte(v))
	}
	if depth > 4 {
		return out
	}
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) > 0 && raw[0] == '{':
		var ms []member
		if !ledger.Members(raw, func(k, v []byte) bool { ms = append(ms, member{string(k), v}); return true }) {
			return out
		}
		build := func(ms []member, keys []string) []byte {
			var b bytes.Buffer
			b.WriteByte('{')
			for i, m := range ms {
				if i > 0 {
					b.WriteString(" , ")
				}
				if keys != nil {
					b.WriteString(keys[i])
				} else {
					k, _ := json.Marshal(m.key)
					b.Write(k)
				}
				b.WriteString(" :\t")
				b.Write(m.raw)
			}
			b.WriteByte('}')
			return b.Bytes()
		}
		out = append(out, build(ms, nil))
		out = append(out, build(append(ms[:len(ms):len(ms)], member{"unknown_member", []byte(`1`)}), nil))
		for i, m := range ms {
			for _, v := range valueVariants(m.raw, depth+1) {
				c := append([]member{}, ms...)
				c[i].raw = v
				out = append(out, build(c, nil))
			}
			c := append([]member{}, ms[:i]...)
			out = append(out, build(append(c, ms[i+1:]...), nil))
			out = append(out, build(append(append([]member{}, ms...), m), nil))
			keys := make([]string, len(ms))
			for j := range ms {
				k, _ := json.Marshal(ms[j].key)
				keys[j] = string(k)
			}
			orig := keys[i]
			name := m.key
			for _, k := range []string{
				`"` + strings.ToUpper(name) + `"`,
				`"` + strings.ToUpper(name[:1]) + name[1:] + `"`,
				`"\u00` + strings.ToLower(string("0123456789ABCDEF"[name[0]>>4])) + string("0123456789abcdef"[name[0]&15]) + name[1:] + `"`,
				`"` + strings.ReplaceAll(strings.ReplaceAll(name, "k", "\u212a"), "s", "\u017f") + `"`,
				`"` + name + ` "`,
			} {
				keys[i] = k
				out = append(out, build(ms, keys))
			}
			keys[i] = orig
		}
	case len(raw) > 0 && raw[0] == '[':
		var elems []json.RawMessage
		if json.Unmarshal(raw, &elems) != nil || len(elems) == 0 {
			return out
		}
		join := func(es []json.RawMessage) []byte {
			b := []byte{'['}
			for i, e := range es {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, e...)
			}
			return append(b, ']')
		}
		for _, v := range valueVariants(elems[0], depth+1) {
			c := append([]json.RawMessage{}, elems...)
			c[0] = v
			out = append(out, join(c))
		}
		out = append(out, join(append(append([]json.RawMessage{}, elems...), elems[0])), []byte("[ ]"))
	}
	return out
}

// TestFastDecode_MatchesReference: on the payloads of every registered
// type (the samples, every type with every member filled, every entry of
// the fixture ledgers) and on thousands of variants of each, the fast
// path of Check either declines or fills exactly the payload
// encoding/json fills, and Check's verdict and error are the reference's.
func TestFastDecode_MatchesReference(t *testing.T) {
	samples := sampleInputs(t)
	filled := samples[len(samples)-len(event.Types()):] // every member of its type filled
	seeds := append(samples, fixturePayloads(t)...)
	// Each type's payload with every member filled gets every variant,
	// and so does one other payload of the type (a sample or a fixture
	// entry), drawn afresh each run (logged; OPX_FASTDECODE_SEED replays
	// a draw); under -race, a third of the variants, drawn too: the
	// first three of each type every time took most of the package's
	// time under -race.
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("OPX_FASTDECODE_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("OPX_FASTDECODE_SEED=%q: %v", s, err)
		}
		seed = n
	}
	t.Logf("OPX_FASTDECODE_SEED=%d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	chosen := map[int]bool{}
	byType := map[string][]int{}
	for i, in := range seeds {
		if i >= len(samples)-len(filled) && i < len(samples) {
			chosen[i] = true
			continue
		}
		byType[in.typ] = append(byType[in.typ], i)
	}
	for _, is := range byType {
		chosen[is[rng.IntN(len(is))]] = true
	}
	mutated := map[string]int{}
	accepted := 0
	runs := 0
	for i, in := range seeds {
		sameAsReference(t, in.typ, in.data)
		runs++
		if !chosen[i] {
			continue
		}
		mutated[in.typ]++
		for _, v := range variants(in.data) {
			if race.Enabled && rng.IntN(3) != 0 {
				continue // a third of them, drawn
			}
			if sameAsReference(t, in.typ, v) {
				accepted++
			}
			runs++
		}
	}
	for _, typ := range event.Types() {
		if mutated[typ] == 0 {
			t.Errorf("no payload of %s was checked", typ)
		}
	}
	t.Logf("%d payloads compared, %d variants accepted by the fast path", runs, accepted)
	if accepted == 0 {
		t.Fatal("the fast path accepted no variant: the comparison proves nothing")
	}
}

// TestFastDecode_CoversEveryType: every registered type's valid payloads,
// as recorded, take the fast path (else strict verify is slow for them).
func TestFastDecode_CoversEveryType(t *testing.T) {
	seen := map[string]bool{}
	for _, in := range append(sampleInputs(t)[:len(samples)], fixturePayloads(t)...) {
		if event.Reference(in.typ, in.data) != nil {
			continue
		}
		seen[in.typ] = true
		if _, ok := event.FastDecode(in.typ, in.data, true); !ok {
			t.Errorf("%s: the fast path declines a valid payload: %s", in.typ, in.data)
		}
	}
	for _, typ := range event.Types() {
		if !seen[typ] {
			t.Errorf("%s: no valid payload to try", typ)
		}
	}
}

// FuzzFastCheck: for any type name and bytes, the fast path of Check
// agrees with encoding/json (sameAsReference). The seeds are FuzzCheck's
// plus the samples and the first payload of each type in the fixture
// ledgers:
//
//	go test ./ledger/event -run '^$' -fuzz FuzzFastCheck -fuzztime 60s -fuzzminimizetime 3s
func FuzzFastCheck(f *testing.F) {
	for _, p := range samples {
		b, err := ledger.MarshalCanonical(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(p.Type(), b)
	}
	seen := map[string]bool{}
	for _, in := range fixturePayloads(f) {
		if !seen[in.typ] {
			seen[in.typ] = true
			f.Add(in.typ, in.data)
		}
	}
	f.Fuzz(func(t *testing.T, typ string, data []byte) {
		sameAsReference(t, typ, data)
	})
}

// BenchmarkCheck: Check (fast path) beside the encoding/json reference on
// every valid payload of the fixture ledgers (a ledger that verifies
// holds only those), in the same run:
//
//	go test ./ledger/event -run '^$' -bench Check -count 3
func BenchmarkCheck(b *testing.B) {
	var ins []checkInput
	for _, in := range fixturePayloads(b) {
		if event.Reference(in.typ, in.data) == nil {
			ins = append(ins, in)
		}
	}
	for _, c := range []struct {
		name  string
		check func(string, []byte) error
	}{{"fast", event.Check}, {"reference", event.Reference}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				for _, in := range ins {
					c.check(in.typ, in.data)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ins)), "ns/payload")
		})
	}
}

// TestDecodeFast_MatchesDecode: DecodeFast gives Decode's payload and
// verdict for every payload of the fixture ledgers (broken ones too).
func TestDecodeFast_MatchesDecode(t *testing.T) {
	for i, in := range fixturePayloads(t) {
		e := ledger.Entry{Seq: uint64(i), Type: in.typ, Data: in.data}
		a, errA := event.Decode(e)
		b, errB := event.DecodeFast(e)
		if (errA == nil) != (errB == nil) || !reflect.DeepEqual(a, b) {
			t.Fatalf("payload %d (%s): Decode %+v %v, DecodeFast %+v %v", i, e.Type, a, errA, b, errB)
		}
	}
}
