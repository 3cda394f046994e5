package ledger_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/opx-dev/opx/ledger"
)

// FuzzParseEntry: the entry decoder never panics, and what it accepts
// survives a canonical round trip with the same fields.
func FuzzParseEntry(f *testing.F) {
	for _, l := range katLinesF(f) {
		f.Add(l)
		f.Add(bytes.Replace(l, []byte(`"seq":`), []byte(`"seq": `), 1))
		f.Add(l[:len(l)/2])
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"data":{},"prev":"","seq":-1,"session":"","ts":"","type":""}`))
	f.Add([]byte(`{"data":{},"data":{},"prev":"0","seq":0,"session":"","ts":"","type":""}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		e, err := ledger.ParseEntry(raw)
		if err != nil {
			return
		}
		if ledger.IsCanonical(raw) && e.Hash() != ledger.Sum(raw) {
			t.Fatal("hash is not BLAKE3 of the stored bytes")
		}
		canon, err := ledger.Canonicalize(raw)
		if err != nil {
			return // e.g. a float inside data: parseable, but never appendable
		}
		e2, err := ledger.ParseEntry(canon)
		if err != nil {
			t.Fatalf("canonical form %s of an accepted entry does not parse: %v", canon, err)
		}
		if e.Seq != e2.Seq || e.Prev != e2.Prev || e.TS != e2.TS || e.Session != e2.Session || e.Type != e2.Type {
			t.Fatalf("fields changed by canonicalisation: %+v vs %+v", e, e2)
		}
	})
}

// FuzzCanonicalize: never panics; the output is valid, canonical, a fixed
// point, and means the same as the input.
func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1,2,{"c":null}]}`, `"\ud83d\ude00\u0000"`, `{"\ufb33":1,"\ud83d\ude00":2}`, `1.5`, `{"a":1,"a":2}`, `[`, "\"\xff\""} {
		f.Add([]byte(s))
	}
	for _, l := range katLinesF(f) {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := ledger.Canonicalize(in)
		if err != nil {
			return
		}
		if !json.Valid(out) || !ledger.IsCanonical(out) {
			t.Fatalf("output %q is not valid canonical JSON", out)
		}
		again, err := ledger.Canonicalize(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not a fixed point: %q -> %q (%v)", out, again, err)
		}
		var a, b any
		da := json.NewDecoder(bytes.NewReader(in))
		da.UseNumber()
		db := json.NewDecoder(bytes.NewReader(out))
		db.UseNumber()
		if da.Decode(&a) != nil || db.Decode(&b) != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("meaning changed: %q -> %q", in, out)
		}
	})
}

// FuzzImport feeds arbitrary bytes to the JSONL verifier and importer:
// never a panic; a stream reported OK really is a chain from genesis; a
// refused import leaves nothing, an accepted one verifies.
func FuzzImport(f *testing.F) {
	var stream bytes.Buffer
	for _, l := range katLinesF(f) {
		stream.Write(l)
		stream.WriteByte('\n')
	}
	good := stream.Bytes()
	f.Add(good)
	f.Add(good[:len(good)-1])
	f.Add(append(append([]byte{}, good...), "x\n"...))
	f.Add(bytes.Replace(good, []byte(`"seq":1`), []byte(`"seq":2`), 1))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		rep, err := ledger.VerifyStream(bytes.NewReader(in), nil, nil, ledger.VerifyOptions{Strict: true})
		if err != nil {
			return
		}
		if rep.OK {
			checkChain(t, in)
		}
		dir := t.TempDir()
		src := filepath.Join(dir, "in.jsonl")
		if err := os.WriteFile(src, in, 0o600); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "out", "ledger.db")
		os.MkdirAll(filepath.Dir(out), 0o700)
		_, err = ledger.Import(src, out, ledger.ImportOptions{})
		left, _ := os.ReadDir(filepath.Dir(out))
		if err != nil {
			if len(left) != 0 {
				t.Fatalf("refused import (%v) left %d files", err, len(left))
			}
			if rep.OK && errors.Is(err, ledger.ErrIntegrity) {
				t.Fatalf("stream verified but import found integrity failures: %v", err)
			}
			return
		}
		l, err := ledger.OpenReadOnly(out)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if r, err := l.Verify(ledger.VerifyOptions{Strict: true}); err != nil || !r.OK {
			t.Fatalf("imported ledger does not verify: %v %v", err, r.Err())
		}
	})
}

// checkChain re-checks an accepted stream independently.
func checkChain(t *testing.T, in []byte) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(in))
	sc.Buffer(nil, ledger.MaxLineSize+1)
	prev, seq := ledger.ZeroHash, uint64(0)
	for sc.Scan() {
		e, err := ledger.ParseEntry(sc.Bytes())
		if err != nil || e.Seq != seq || e.Prev != prev {
			t.Fatalf("accepted stream is not a chain at line %d: %v", seq, err)
		}
		prev, seq = ledger.Sum(sc.Bytes()), seq+1
	}
	if seq == 0 {
		t.Fatal("accepted an empty stream")
	}
}

func katLinesF(f *testing.F) [][]byte {
	b, err := os.ReadFile("testdata/kat.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	return bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
}
