package ledger_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"

	"github.com/opx-dev/opx/ledger"
)

// The fuzz targets below feed arbitrary bytes to every decoder of the
// package: the entry parser, the canonicaliser and the JSONL verifier and
// importer. Their seeds run with every `go test`; crashers found with
// `go test -fuzz` are committed under testdata/fuzz/<target>/, where they
// run as seeds too.

// fuzzLedgerID makes the seed ledgers reproducible.
const fuzzLedgerID = "0f0e0d0c0b0a09080706050403020100"

// fuzzExport builds a small ledger with a fixed clock and id, exports it
// and returns the JSONL stream and a directory holding its exported blobs
// (without the manifest, so a mutated stream is not held to it). With
// blobs, entries name blobs and one is pruned (a chronicle.pruned entry
// names it, the export does not carry it).
func fuzzExport(f *testing.F, blobs bool) (stream []byte, blobDir string) {
	f.Helper()
	dir := f.TempDir()
	clock := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	l, err := ledger.Create(filepath.Join(dir, "ledger.db"), ledger.Options{NoSync: true, LedgerID: fuzzLedgerID,
		Now: func() time.Time { clock = clock.Add(time.Millisecond + 7); return clock }})
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	recs := []ledger.Record{
		{Session: "s1", Type: ledger.TypeNote, Data: map[string]any{"author": "fuzz", "text": "plain"}},
		{Session: "sess-ü \"q\"", Type: ledger.TypeNote, Data: map[string]any{"author": "fuzz", "text": "café \"q\" \\ \n\t\x01 😀 \u2028 </>&"}},
		{Session: "s1", Type: "tool.proposed", Data: json.RawMessage(`{"call_id":"c1","n":-9007199254740991,"args":{"b":[1,-2,9007199254740991,[],{}],"a":null,"\ufb33":true,"😀":false,"":""}}`)},
		{Type: "engine.started"},
	}
	if blobs {
		a, b := []byte("attachment A"), bytes.Repeat([]byte("output B "), 100)
		recs = append(recs,
			ledger.Record{Session: "s2", Type: ledger.TypeNote, Data: map[string]any{"author": "fuzz", "text": "with a blob", "blob": ledger.Sum(a).String()}, Blobs: [][]byte{a}},
			ledger.Record{Session: "s2", Type: "exec.completed", Data: map[string]any{"call_id": "c1", "tool": "shell", "out_blob": ledger.Sum(b).String(), "exit": 0}, Blobs: [][]byte{b}})
	}
	if _, err := l.Append(ctx, ledger.Sync, recs...); err != nil {
		f.Fatal(err)
	}
	if blobs {
		pruned := ledger.Sum([]byte("attachment A")).String()
		if _, err := l.PruneBlobs(ctx, ledger.Record{Type: ledger.TypePruned, Data: map[string]any{"blobs": []string{pruned}, "reason": "fuzz"}}); err != nil {
			f.Fatal(err)
		}
	}
	export := filepath.Join(dir, "export.jsonl")
	if _, err := l.ExportFile(export, ledger.ExportOptions{}); err != nil {
		f.Fatal(err)
	}
	if err := l.Close(); err != nil {
		f.Fatal(err)
	}
	if stream, err = os.ReadFile(export); err != nil {
		f.Fatal(err)
	}
	blobDir = filepath.Join(dir, "blobs")
	if err := os.Mkdir(blobDir, 0o700); err != nil {
		f.Fatal(err)
	}
	files, err := os.ReadDir(ledger.BundlePath(export))
	if err != nil {
		f.Fatal(err)
	}
	for _, fi := range files {
		if fi.Name() == ledger.ManifestName {
			continue
		}
		if err := os.Rename(filepath.Join(ledger.BundlePath(export), fi.Name()), filepath.Join(blobDir, fi.Name())); err != nil {
			f.Fatal(err)
		}
	}
	return stream, blobDir
}

// fuzzLines splits a stream into its lines, without the newlines.
func fuzzLines(stream []byte) [][]byte {
	return bytes.Split(bytes.TrimSuffix(stream, []byte("\n")), []byte("\n"))
}

// fuzzStreamSeeds returns good and the classic ways to break it.
func fuzzStreamSeeds(good []byte) [][]byte {
	lines := fuzzLines(good)
	join := func(ls ...[]byte) []byte {
		var b []byte
		for _, l := range ls {
			b = append(append(b, l...), '\n')
		}
		return b
	}
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0x01
	last := lines[len(lines)-1]
	spaced := append(bytes.Clone(good[:len(good)-len(last)-1]), bytes.Replace(last, []byte(`,"seq":`), []byte(`, "seq": `), 1)...)
	return [][]byte{
		good,
		good[:len(good)-1],                  // no final newline
		append(bytes.Clone(good), "x\n"...), // trailing garbage
		append(bytes.Clone(good), '\n'),     // empty line at the end
		join(lines[0]),                      // genesis alone: valid
		join(lines[0], lines[2]),            // gap
		join(lines[0], lines[2], lines[1]),  // swapped
		join(lines[0], lines[1], lines[1]),  // duplicated
		bytes.ReplaceAll(good, []byte("\n"), []byte("\r\n")),
		flipped,
		append(spaced, '\n'), // last entry not canonical, chain intact
		bytes.Replace(good, []byte(`"seq":0`), []byte(`"seq":1`), 1),
		{},
		[]byte("\n"),
		[]byte("{}\n"),
	}
}

// FuzzParseEntry: the entry decoder never panics; what it accepts is well
// formed JSON that encoding/json reads the same way, and its canonical form
// parses to the same fields, which MarshalCanonical rebuilds byte for byte.
func FuzzParseEntry(f *testing.F) {
	stream, _ := fuzzExport(f, true)
	for _, l := range fuzzLines(stream) {
		f.Add(l)
		f.Add(bytes.Replace(l, []byte(`"seq":`), []byte("\t\"seq\" :\n "), 1)) // white space
		f.Add(bytes.Replace(l, []byte(`"seq"`), []byte(`"\u0073eq"`), 1))      // escaped key
		f.Add(l[:len(l)/2])                                                    // cut
	}
	for _, l := range katLinesF(f) {
		f.Add(l)
	}
	genesis := fuzzLines(stream)[0]
	for _, s := range []string{
		`{}`, `[]`, `null`, ``, ` `,
		`{"type":"t","ts":"","session":"","seq":0,"prev":"0000000000000000000000000000000000000000000000000000000000000000","data":{}}`, // any order
		`{"data":{},"prev":"0000000000000000000000000000000000000000000000000000000000000000","seq":0,"session":"","ts":"","type":""}`,
		`{"data":{},"prev":"0000000000000000000000000000000000000000000000000000000000000000","seq":0,"session":"","ts":"","type":"","x":1}`,
		`{"data":{},"data":{},"prev":"0000000000000000000000000000000000000000000000000000000000000000","seq":0,"session":"","ts":"","type":""}`,
		`{"data":[],"prev":"0000000000000000000000000000000000000000000000000000000000000000","seq":0,"session":"","ts":"","type":""}`,
		`{"data":{"a":-0,"b":1.5},"prev":"0000000000000000000000000000000000000000000000000000000000000000","seq":0,"session":"","ts":"","type":""}`,
		`{"data":{"a":"\ud800"},"prev":"0000000000000000000000000000000000000000000000000000000000000000","seq":0,"session":"\u00e9","ts":"","type":""}`,
		`{"data":{},"prev":"000000000000000000000000000000000000000000000000000000000000000A","seq":0,"session":"","ts":"","type":""}`,
		`{"data":{},"prev":"00","seq":0,"session":"","ts":"","type":""}`,
		`{"data":{},"prev":"0000000000000000000000000000000000000000000000000000000000000000","seq":01,"session":"","ts":"","type":""}`,
		`{"data":{},"prev":"0000000000000000000000000000000000000000000000000000000000000000","seq":-1,"session":"","ts":"","type":""}`,
		`{"data":{},"prev":"0000000000000000000000000000000000000000000000000000000000000000","seq":9007199254740992,"session":"","ts":"","type":""}`,
		`{"data":{},"prev":"0000000000000000000000000000000000000000000000000000000000000000","seq":1e3,"session":"","ts":"","type":""}`,
		`{"data":{},"prev":"0000000000000000000000000000000000000000000000000000000000000000","seq":0,"session":"","ts":"","type":""} x`,
		"{\"data\":{},\"prev\":\"0000000000000000000000000000000000000000000000000000000000000000\",\"seq\":0,\"session\":\"\xff\",\"ts\":\"\",\"type\":\"\"}",
	} {
		f.Add([]byte(s))
	}
	f.Add(append(bytes.Clone(genesis), '\n'))
	f.Add(bytes.Repeat([]byte(`{"data":`), 600))
	f.Fuzz(func(t *testing.T, raw []byte) {
		e, err := ledger.ParseEntry(raw)
		if err != nil {
			return
		}
		if !bytes.Equal(e.Raw, raw) || e.Hash() != ledger.Sum(raw) {
			t.Fatalf("Raw or Hash is not the input's: %q", raw)
		}
		if !json.Valid(raw) {
			t.Fatalf("accepted invalid JSON %q", raw)
		}
		fuzzSameMembers(t, raw, &e)
		canon, err := ledger.Canonicalize(raw)
		if err != nil {
			return // e.g. -0 or a duplicate key in data: parseable, so verify can say "not canonical"
		}
		if ledger.IsCanonical(raw) != bytes.Equal(canon, raw) {
			t.Fatalf("IsCanonical(%q) disagrees with Canonicalize", raw)
		}
		e2, err := ledger.ParseEntry(canon)
		if err != nil {
			t.Fatalf("canonical form %q of accepted %q does not parse: %v", canon, raw, err)
		}
		if e.Seq != e2.Seq || e.Prev != e2.Prev || e.TS != e2.TS || e.Session != e2.Session || e.Type != e2.Type {
			t.Fatalf("canonicalising %q changed fields: %+v vs %+v", raw, e, e2)
		}
		if data, err := ledger.Canonicalize(e.Data); err != nil || !bytes.Equal(data, e2.Data) {
			t.Fatalf("canonical data %q, want %q (%v)", e2.Data, data, err)
		}
		rebuilt, err := ledger.MarshalCanonical(map[string]any{"data": json.RawMessage(e.Data), "prev": e.Prev,
			"seq": e.Seq, "session": e.Session, "ts": e.TS, "type": e.Type})
		if err != nil || !bytes.Equal(rebuilt, canon) {
			t.Fatalf("entry rebuilt from its fields is %q, canonical form is %q (%v)", rebuilt, canon, err)
		}
	})
}

// fuzzSameMembers checks an accepted entry against encoding/json: the
// same six members with the same values.
func fuzzSameMembers(t *testing.T, raw []byte, e *ledger.Entry) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("encoding/json refuses accepted entry %q: %v", raw, err)
	}
	var seq uint64
	var prev ledger.Hash
	var session, ts, typ string
	for k, v := range map[string]any{"seq": &seq, "prev": &prev, "session": &session, "ts": &ts, "type": &typ} {
		if err := json.Unmarshal(m[k], v); err != nil {
			t.Fatalf("encoding/json reads member %s of accepted %q as %v", k, raw, err)
		}
	}
	if len(m) != 6 || seq != e.Seq || prev != e.Prev || session != e.Session || ts != e.TS || typ != e.Type || !bytes.Equal(m["data"], e.Data) {
		t.Fatalf("encoding/json reads %q differently: %d members, seq %d, prev %s, session %q, ts %q, type %q, data %q; ParseEntry: %+v",
			raw, len(m), seq, prev, session, ts, typ, m["data"], *e)
	}
}

// FuzzCanonicalize: never panics; the output is valid UTF-8 JSON in
// canonical form, a fixed point, and means what the input meant, and
// encoding/json's encoding of that meaning canonicalises to it too.
func FuzzCanonicalize(f *testing.F) {
	stream, _ := fuzzExport(f, true)
	for _, l := range append(fuzzLines(stream), katLinesF(f)...) {
		f.Add(l)
	}
	for _, s := range []string{
		`{"b":1,"a":[1,2,{"c":null,"B":true}]}`, ` { "a" : [ ] , "b" : { } } `,
		`"\ud83d\ude00\u0000\u001f\u007f\u2028\/\b\f\n\r\t\"\\"`, `"\u00e9\u0041"`,
		`{"\ufb33":1,"\ud83d\ude00":2,"\u20ac":3,"\r":4,"1":5,"":6}`, // UTF-16 order differs from UTF-8 order
		`0`, `-1`, `9007199254740991`, `-9007199254740991`, `9007199254740992`, `-0`, `01`, `1.5`, `1e2`, `1E2`, `-`,
		`{"a":1,"a":2}`, `{"b":1,"a":2,"b":3}`, `[`, `{"a"`, `{"a":}`, `[1,]`, `tru`, `nul`, "\"\xff\"", `"\ud800"`, `"\udc00\ud800"`,
		`"\u12"`, `"\x"`, "\"\x01\"", `1 2`, `{} x`,
	} {
		f.Add([]byte(s))
	}
	f.Add(append(bytes.Repeat([]byte("["), 513), bytes.Repeat([]byte("]"), 513)...))
	f.Add(append(bytes.Repeat([]byte("["), 512), bytes.Repeat([]byte("]"), 512)...))
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := ledger.Canonicalize(in)
		if err != nil {
			var se *ledger.SyntaxError
			if !errors.As(err, &se) || se.Offset < 0 || se.Offset > len(in) {
				t.Fatalf("Canonicalize(%q) error %v is not a SyntaxError within the input", in, err)
			}
			if ledger.IsCanonical(in) {
				t.Fatalf("IsCanonical(%q) but Canonicalize fails: %v", in, err)
			}
			return
		}
		if !json.Valid(in) {
			t.Fatalf("accepted invalid JSON %q", in)
		}
		if !json.Valid(out) || !utf8.Valid(out) {
			t.Fatalf("output %q of %q is not valid UTF-8 JSON", out, in)
		}
		if !ledger.IsCanonical(out) {
			t.Fatalf("output %q of %q is not canonical", out, in)
		}
		if again, err := ledger.Canonicalize(out); err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not a fixed point: %q -> %q (%v)", out, again, err)
		}
		if ledger.IsCanonical(in) != bytes.Equal(in, out) {
			t.Fatalf("IsCanonical(%q) = %v, but the canonical form is %q", in, ledger.IsCanonical(in), out)
		}
		a, b := fuzzDecode(t, in), fuzzDecode(t, out)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("meaning changed: %q -> %q (%#v vs %#v)", in, out, a, b)
		}
		if re, err := ledger.MarshalCanonical(a); err != nil || !bytes.Equal(re, out) {
			t.Fatalf("encoding/json's form of %q canonicalises to %q, want %q (%v)", in, re, out, err)
		}
	})
}

func fuzzDecode(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("encoding/json cannot decode %q: %v", b, err)
	}
	return v
}

// FuzzVerifyStream: the JSONL verifier never panics and always returns a
// report (no manifest, so no error), and its verdict matches a naive
// reference verifier: OK exactly when the stream is a strictly valid chain
// from genesis. Without a blob source, only pruned blobs may be named.
func FuzzVerifyStream(f *testing.F) {
	plain, _ := fuzzExport(f, false)
	withBlobs, _ := fuzzExport(f, true)
	for _, s := range append(append(fuzzStreamSeeds(plain), fuzzStreamSeeds(withBlobs)...), katStreamF(f)) {
		f.Add(s)
	}
	// Genesis payloads with the right values under the wrong names (found
	// by the reference: encoding/json matches names case-insensitively)
	// and a ledger_id that is 32 characters but not lowercase hex.
	genesis := fuzzLines(plain)[0]
	for _, r := range []struct{ from, to string }{
		{`{"created":"2026-11-22T10:00:00.001000007Z","format":"opx-ledger/1","ledger_id":`, `{"CREATED":"2026-11-22T10:00:00.001000007Z","Format":"opx-ledger/1","LEDGER_ID":`},
		{fuzzLedgerID, strings.ToUpper(fuzzLedgerID)},
		{fuzzLedgerID, "0f0e0d0c0b0a0908070605040302010g"},
	} {
		f.Add(append(bytes.Replace(genesis, []byte(r.from), []byte(r.to), 1), '\n'))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		rep, err := ledger.VerifyStream(bytes.NewReader(in), nil, nil, ledger.VerifyOptions{Strict: true, Workers: 2})
		if err != nil || rep == nil {
			t.Fatalf("VerifyStream without a manifest: report %v, error %v", rep, err)
		}
		if bytes.HasPrefix(in, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
			// The reader takes it as zstd: the reference checks what it
			// decompresses to, and nothing that does not decompress passes.
			plain, derr := fuzzZstdDec.DecodeAll(in, nil)
			if derr != nil {
				if rep.OK {
					t.Fatalf("verifier accepts %q, which does not decompress: %v", in, derr)
				}
				return
			}
			in = plain
		}
		fuzzCheckReport(t, in, rep, func(ledger.Hash) bool { return false })
	})
}

// fuzzCheckReport compares a report on stream with the reference verdict.
func fuzzCheckReport(t *testing.T, stream []byte, rep *ledger.Report, haveBlob func(ledger.Hash) bool) {
	t.Helper()
	if rep.OK != (len(rep.Failures) == 0) || rep.OK != (rep.Err() == nil) {
		t.Fatalf("report OK %v with %d failures, Err %v", rep.OK, len(rep.Failures), rep.Err())
	}
	for _, fl := range rep.Failures {
		if !errors.Is(fl, ledger.ErrIntegrity) || fl.Kind == "" {
			t.Fatalf("failure %+v is not a proper integrity finding", fl)
		}
	}
	refErr := fuzzReferenceVerify(stream, haveBlob)
	switch {
	case rep.OK && refErr != nil:
		t.Fatalf("verifier accepts %q; the reference refuses it: %v", stream, refErr)
	case !rep.OK && refErr == nil:
		t.Fatalf("verifier refuses %q (%v); the reference accepts it", stream, rep.Err())
	case rep.OK:
		lines := fuzzLines(stream)
		last := lines[len(lines)-1]
		if rep.Entries != uint64(len(lines)) || rep.HeadSeq != uint64(len(lines)-1) || rep.HeadHash != ledger.Sum(last).String() {
			t.Fatalf("report says %d entries, head %d %s; the stream has %d, ending in %s",
				rep.Entries, rep.HeadSeq, rep.HeadHash, len(lines), ledger.Sum(last))
		}
	}
}

// fuzzReferenceVerify is a deliberately naive verifier of a JSONL stream
// under opx-ledger/1 --strict (without payload checks for engine types),
// built on encoding/json: every line, newline-terminated, is a canonical
// object of exactly the six members; seq counts from 0; prev is the hash
// of the previous line (zeros for the first); ts is RFC 3339 UTC; type is
// area.event, ledger.genesis exactly at seq 0 with its three fields; every
// named blob is present or was pruned.
func fuzzReferenceVerify(stream []byte, haveBlob func(ledger.Hash) bool) error {
	if len(stream) == 0 || stream[len(stream)-1] != '\n' {
		return errors.New("empty, or the last line has no newline")
	}
	prev := ledger.ZeroHash.String()
	named, pruned := map[ledger.Hash]bool{}, map[ledger.Hash]bool{}
	for i, line := range fuzzLines(stream) {
		if len(line) > ledger.MaxLineSize || !ledger.IsCanonical(line) {
			return fmt.Errorf("line %d: too long or not canonical", i)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(line, &m); err != nil {
			return fmt.Errorf("line %d: %v", i, err)
		}
		var e struct {
			prev, session, ts, typ string
			seq                    uint64
		}
		for k, v := range map[string]any{"prev": &e.prev, "session": &e.session, "ts": &e.ts, "type": &e.typ, "seq": &e.seq} {
			if err := json.Unmarshal(m[k], v); m[k] == nil || string(m[k]) == "null" || err != nil {
				return fmt.Errorf("line %d: member %s: %v", i, k, err)
			}
		}
		data := m["data"]
		if len(m) != 6 || len(data) == 0 || data[0] != '{' {
			return fmt.Errorf("line %d: members or data", i)
		}
		if e.seq != uint64(i) || e.prev != prev {
			return fmt.Errorf("line %d: seq %d, prev %s, want prev %s", i, e.seq, e.prev, prev)
		}
		if ts, err := time.Parse(time.RFC3339Nano, e.ts); err != nil || !strings.HasSuffix(e.ts, "Z") || ts.Location() != time.UTC {
			return fmt.Errorf("line %d: ts %q", i, e.ts)
		}
		area, event, ok := strings.Cut(e.typ, ".")
		if !ok || area == "" || event == "" || (i == 0) != (e.typ == ledger.TypeGenesis) {
			return fmt.Errorf("line %d: type %q", i, e.typ)
		}
		if i == 0 {
			var g map[string]any
			json.Unmarshal(data, &g)
			f, _ := g["format"].(string)
			id, _ := g["ledger_id"].(string)
			c, _ := g["created"].(string)
			if len(g) != 3 || f != ledger.Format || len(id) != 32 || strings.Trim(id, "0123456789abcdef") != "" || c == "" {
				return fmt.Errorf("genesis data %s", data)
			}
		}
		refs, err := ledger.BlobRefs(data)
		if err != nil {
			return fmt.Errorf("line %d: blob refs: %v", i, err)
		}
		for _, h := range refs {
			named[h] = true
		}
		if e.typ == ledger.TypePruned {
			ps, err := ledger.PrunedBlobs(data)
			if err != nil {
				return fmt.Errorf("line %d: pruned blobs: %v", i, err)
			}
			for _, h := range ps {
				pruned[h] = true
			}
		}
		prev = ledger.Sum(line).String()
	}
	for h := range named {
		if !pruned[h] && !haveBlob(h) {
			return fmt.Errorf("blob %s missing", h)
		}
	}
	return nil
}

// FuzzImport: Import never panics; it refuses exactly the streams the
// reference verifier refuses, leaving nothing behind (no ledger, no
// temporary file), and what it accepts becomes a ledger that verifies and
// holds the stream's entries byte for byte. Seeds include zstd streams.
func FuzzImport(f *testing.F) {
	plain, _ := fuzzExport(f, false)
	withBlobs, blobDir := fuzzExport(f, true)
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range append(append(fuzzStreamSeeds(plain), fuzzStreamSeeds(withBlobs)...), katStreamF(f)) {
		f.Add(s)
	}
	f.Add(enc.EncodeAll(withBlobs, nil))
	f.Add(enc.EncodeAll(withBlobs[:len(withBlobs)-1], nil))
	f.Add(enc.EncodeAll(plain, nil)[:20])
	dec, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(64<<20))
	if err != nil {
		f.Fatal(err)
	}
	haveBlob := func(h ledger.Hash) bool {
		_, err := os.Stat(filepath.Join(blobDir, h.String()+".zst"))
		return err == nil
	}
	// One work directory for all runs of the body (they run one at a
	// time): making and removing directories would cost more than the
	// import itself.
	work := f.TempDir()
	src := filepath.Join(work, "in.jsonl")
	if err := os.Symlink(blobDir, ledger.BundlePath(src)); err != nil {
		f.Fatal(err)
	}
	out := filepath.Join(work, "out")
	if err := os.Mkdir(out, 0o700); err != nil {
		f.Fatal(err)
	}
	dst := filepath.Join(out, "ledger.db")
	f.Fuzz(func(t *testing.T, in []byte) {
		if err := os.WriteFile(src, in, 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(dst)
		rep, err := ledger.Import(src, dst, ledger.ImportOptions{Verify: ledger.VerifyOptions{Workers: 2}})

		stream, known := in, true
		if bytes.HasPrefix(in, []byte{0x28, 0xb5, 0x2f, 0xfd}) {
			var derr error
			stream, derr = dec.DecodeAll(in, nil)
			known = derr == nil
		}
		if err != nil {
			if _, serr := os.Lstat(dst); serr == nil {
				t.Fatalf("refused import (%v) left %s", err, dst)
			}
			if left, _ := os.ReadDir(out); len(left) > 0 {
				t.Fatalf("refused import (%v) left %d files, first %s", err, len(left), left[0].Name())
			}
			if known && fuzzReferenceVerify(stream, haveBlob) == nil {
				t.Fatalf("import refuses %q, which the reference accepts: %v", stream, err)
			}
			return
		}
		if !known {
			t.Fatalf("import accepts %q, which does not decompress", in)
		}
		if rep == nil || !rep.OK {
			t.Fatalf("import succeeded with report %+v", rep)
		}
		if left, _ := os.ReadDir(out); len(left) != 1 {
			t.Fatalf("import left %d files beside the ledger", len(left)-1)
		}
		fuzzCheckReport(t, stream, rep, haveBlob)
		fuzzCheckImported(t, dst, stream, rep)
	})
}

// fuzzCheckImported checks an imported ledger: it verifies strictly, its
// head is the stream's, its entries are the stream's lines verbatim, and
// every blob the stream names and did not prune reads back.
func fuzzCheckImported(t *testing.T, dst string, stream []byte, rep *ledger.Report) {
	t.Helper()
	l, err := ledger.OpenReadOnly(dst)
	if err != nil {
		t.Fatalf("open imported ledger: %v", err)
	}
	defer l.Close()
	got, err := l.Verify(ledger.VerifyOptions{Strict: true, Workers: 2})
	if err != nil || !got.OK {
		t.Fatalf("imported ledger does not verify: %v %v", err, got.Err())
	}
	h, err := l.Head()
	if err != nil || h.Seq != rep.HeadSeq || h.Hash.String() != rep.HeadHash {
		t.Fatalf("imported head %d %s, stream head %d %s (%v)", h.Seq, h.Hash, rep.HeadSeq, rep.HeadHash, err)
	}
	var back bytes.Buffer
	pruned := map[ledger.Hash]bool{}
	var named []ledger.Hash
	err = l.Range(0, h.Seq, func(e ledger.Entry) error {
		back.Write(e.Raw)
		back.WriteByte('\n')
		refs, _ := ledger.BlobRefs(e.Data)
		named = append(named, refs...)
		if e.Type == ledger.TypePruned {
			ps, _ := ledger.PrunedBlobs(e.Data)
			for _, p := range ps {
				pruned[p] = true
			}
		}
		return nil
	})
	if err != nil || !bytes.Equal(back.Bytes(), stream) {
		t.Fatalf("imported entries differ from the stream (%v)", err)
	}
	for _, b := range named {
		if _, err := l.GetBlob(b); err != nil && !pruned[b] {
			t.Fatalf("blob %s named by the stream: %v", b, err)
		}
	}
}

func katLinesF(f *testing.F) [][]byte {
	b, err := os.ReadFile("testdata/kat.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	return bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
}

// katStreamF is testdata/kat.jsonl: a valid stream of three entries.
func katStreamF(f *testing.F) []byte {
	b, err := os.ReadFile("testdata/kat.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	return b
}

// fuzzZstdDec decodes zstd inputs for the reference verifier.
var fuzzZstdDec, _ = zstd.NewReader(nil, zstd.WithDecoderMaxMemory(64<<20))
