package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/opx-dev/opx/engine/config"
)

func TestInit_WritesTemplateOnce(t *testing.T) {
	ws := t.TempDir()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	r := run(t, "init", "--workspace", ws)
	r.wantCode(t, 0)
	r.wantOut(t, "wrote "+filepath.Join(ws, ".opx", "config.yaml"), "opx start")
	b, err := os.ReadFile(config.PathIn(ws))
	if err != nil || string(b) != config.Template {
		t.Fatalf("config.yaml: %v", err)
	}
	if _, err := config.Load(ws); err != nil {
		t.Errorf("the written config does not load: %v", err)
	}
	// A second init keeps the user's file.
	os.WriteFile(config.PathIn(ws), []byte("# mine\n"), 0o644)
	run(t, "init", "--workspace", ws).wantCode(t, 1)
	if b, _ := os.ReadFile(config.PathIn(ws)); string(b) != "# mine\n" {
		t.Error("init overwrote an existing config without --force")
	}
	run(t, "init", "--workspace", ws, "--force").wantCode(t, 0)
}

func TestStart_BadConfigIsAUsageError(t *testing.T) {
	ws := t.TempDir()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	os.MkdirAll(filepath.Join(ws, ".opx"), 0o755)
	os.WriteFile(config.PathIn(ws), []byte("provider:\n  kind: gpt5\n"), 0o644)
	r := run(t, "start", "--workspace", ws)
	r.wantCode(t, 2)
	r.wantErr(t, "gpt5")
}
