package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/opx-dev/opx/cli"
	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/tlog"
)

// forge makes the ledger an attacker who owns the machine would make
// from s: its entries exported, edit applied to them (a list of entry
// objects, by seq), every prev after the first change rechained, every
// ledger.checkpoint recomputed (tree size and root from the forged
// entries) and re-signed with the key from s's state directory, then
// imported by opx itself as a new ledger, so its tree, tiles and head are
// what opx computes: self-consistent in every way the ledger can check.
// It returns the forged ledger's path.
func forge(t *testing.T, s signed, edit func(entries []map[string]any) []map[string]any) string {
	t.Helper()
	dir := t.TempDir()
	export := exportOf(t, s.Path, dir, "orig.jsonl")
	b, err := os.ReadFile(export)
	if err != nil {
		t.Fatal(err)
	}
	var entries []map[string]any
	for _, line := range bytes.SplitAfter(b, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		entries = append(entries, m)
	}
	entries = edit(entries)
	signer, err := tlog.LoadKey(s.Dir) // the stolen key
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	tree := tlog.NewRootBuilder()
	prev := ledger.Hash{}.String()
	for i, m := range entries {
		m["seq"] = json.Number(utoa(uint64(i)))
		m["prev"] = prev
		if m["type"] == ledger.TypeCheckpoint {
			data := m["data"].(map[string]any)
			root := tree.Root()
			data["tree_size"] = json.Number(utoa(tree.Size()))
			data["tree_root"] = tlog.Checkpoint{Root: root}.RootString()
			if _, ok := data["note"]; ok {
				if data["note"], err = signer.Sign(tree.Size(), root); err != nil {
					t.Fatal(err)
				}
			}
		}
		raw, err := json.Marshal(m)
		if err == nil {
			raw, err = ledger.Canonicalize(raw)
		}
		if err != nil {
			t.Fatal(err)
		}
		tree.Append(raw)
		prev = ledger.Sum(raw).String()
		out.Write(append(raw, '\n'))
	}
	forged := filepath.Join(dir, "forged.jsonl")
	if err := os.WriteFile(forged, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// The blobs are the same; the manifest (which names the old head)
	// goes, so the export is taken as a full export from genesis.
	if err := os.Rename(ledger.BundlePath(export), ledger.BundlePath(forged)); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(ledger.BundlePath(forged), "manifest.json"))
	path := filepath.Join(dir, "forged.db")
	run(t, "ledger", "import", forged, "--ledger", path).wantCode(t, cli.ExitOK)
	return path
}
