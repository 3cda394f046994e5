package chronicle_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

func file(p, content string, mode uint32) event.FileState {
	return event.FileState{Path: p, State: event.StateFile, Mode: mode, Size: int64(len(content)), Blob: ledger.Sum([]byte(content)).String()}
}

// TestTree_Encode_CanonicalLines: every manifest line is exactly what the
// ledger's canonicaliser makes of it (the hand-written encoder and the
// RFC 8785 one agree), including names that need escaping.
func TestTree_Encode_CanonicalLines(t *testing.T) {
	tree := &chronicle.Tree{Items: []event.FileState{
		file("a \"quoted\" name\\x", "x", 0o644),
		{Path: "big.iso", State: event.StateFile, Mode: 0o600, Size: 1 << 40, Hash: ledger.Sum([]byte("big")).String(), Omitted: "too large"},
		{Path: "bin", State: event.StateDir, Mode: 0o755},
		file("bin/run\ttab\u0001ctl\u007f\u00e9\u2028", "#!/bin/sh\n", 0o755),
		{Path: "link", State: event.StateSymlink, Target: "../outside <&>"},
	}}
	m := tree.Encode()
	lines := strings.Split(strings.TrimSuffix(string(m), "\n"), "\n")
	if len(lines) != len(tree.Items) || !bytes.HasSuffix(m, []byte("\n")) {
		t.Fatalf("manifest has %d lines for %d items:\n%s", len(lines), len(tree.Items), m)
	}
	for _, l := range lines {
		c, err := ledger.Canonicalize([]byte(l))
		if err != nil {
			t.Fatalf("line %s: %v", l, err)
		}
		if string(c) != l {
			t.Errorf("line is not canonical:\n got %s\nwant %s", l, c)
		}
	}
	back, err := chronicle.DecodeTree(m)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Encode(), m) {
		t.Errorf("round trip changed the manifest")
	}
	if got := back.Get("link"); got.Target != "../outside <&>" {
		t.Errorf("Get(link) = %+v", got)
	}
	if got := back.Get("missing"); got.State != event.StateAbsent {
		t.Errorf("Get(missing) = %+v, want absent", got)
	}
}

func TestDecodeTree_Refuses(t *testing.T) {
	for name, m := range map[string]string{
		"out of order":  `{"path":"b","state":"dir"}` + "\n" + `{"path":"a","state":"dir"}` + "\n",
		"duplicate":     `{"path":"a","state":"dir"}` + "\n" + `{"path":"a","state":"dir"}` + "\n",
		"unknown field": `{"path":"a","state":"dir","x":1}` + "\n",
		"file no blob":  `{"path":"a","state":"file"}` + "\n",
		"bad state":     `{"path":"a","state":"fifo"}` + "\n",
		"not json":      "a\n",
	} {
		if _, err := chronicle.DecodeTree([]byte(m)); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

// TestDiff: created, deleted, changed content, changed mode, changed kind
// and unchanged paths.
func TestDiff(t *testing.T) {
	before := &chronicle.Tree{Items: []event.FileState{
		file("changed.txt", "v1", 0o644),
		file("chmod.sh", "x", 0o644),
		file("gone.txt", "bye", 0o644),
		{Path: "kind", State: event.StateDir, Mode: 0o755},
		file("same.txt", "same", 0o644),
	}}
	after := &chronicle.Tree{Items: []event.FileState{
		file("changed.txt", "v2", 0o644),
		file("chmod.sh", "x", 0o755),
		{Path: "kind", State: event.StateSymlink, Target: "x"},
		file("new.txt", "hi", 0o600),
		file("same.txt", "same", 0o644),
	}}
	pre, post := chronicle.Diff(before, after)
	var got []string
	for i := range pre {
		if pre[i].Path != post[i].Path {
			t.Fatalf("pre and post disagree at %d: %s vs %s", i, pre[i].Path, post[i].Path)
		}
		got = append(got, pre[i].Path+":"+pre[i].State+">"+map[bool]string{true: "absent", false: "present"}[post[i].Absent])
	}
	want := "changed.txt:file>present chmod.sh:file>present gone.txt:file>absent kind:dir>present new.txt:absent>present"
	if strings.Join(got, " ") != want {
		t.Errorf("diff\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	if post[1].Mode != 0o755 || post[4].Hash != ledger.Sum([]byte("hi")).String() {
		t.Errorf("post states %+v", post)
	}
}

// TestDecodeTree_OneReading: a manifest is read only in the form Encode
// writes; encoding/json alone would accept each of these as the same tree.
func TestDecodeTree_OneReading(t *testing.T) {
	good := string((&chronicle.Tree{Items: []event.FileState{file("a", "x", 0o644)}}).Encode())
	line := strings.TrimSuffix(good, "\n")
	for name, m := range map[string]string{
		"key in another case": strings.Replace(good, `"path"`, `"PATH"`, 1),
		"duplicate member":    strings.Replace(good, `"path":"a"`, `"path":"b","path":"a"`, 1),
		"spaces":              strings.Replace(good, `,`, `, `, 1),
		"no final newline":    line,
		"blank line":          good + "\n",
		"crlf":                line + "\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := chronicle.DecodeTree([]byte(m)); !errors.Is(err, chronicle.ErrManifest) {
				t.Errorf("DecodeTree(%q) = %v, want ErrManifest", m, err)
			}
		})
	}
	if _, err := chronicle.DecodeTree([]byte(good)); err != nil {
		t.Fatal(err)
	}
}
